package read

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// A series' rows, one lookup: a SeriesIterator reading by Gets would
// otherwise ask the trust index for every stored hour row (a hash of the
// row key, a shard lock) and the row cache for every head row (a hash, a
// lock, a move in the LRU list). Those lookups are scattered through
// memory, and a query over many series' hours pays them row by row: on
// this VM they and the counters each row added to were about a sixth of
// a warm query's CPU. A walk that met every hour of
// its range leaves the series' rows as one record (trustedSeries), and
// the next walk over any of those hours takes each of them from it by its
// position, after one lookup for the series, and Gets the others; a walk
// over hours that overlap the record's leaves the two joined, so that the
// record grows to the hours queries read. TSBS's queries draw each run's
// hours at random: when a record answered only walks within its hours,
// most walks looked each row up, a fifth of a warm cpu-max-all-8's CPU.
//
// The stored rows of a record hold as the trust index's rows do: taken
// from the record only while internal/changes has marked none of its
// hours since the generation the recording walk began at. Its head rows
// hold as the row cache's do: by the fingerprint the head lists the row
// with (Head.AppendRows), each checked on use.

// trustedSeries is one series' rows as a walk that began at gen met them:
// the stored row of each hour from first (its entry, nil for no row) and
// the head rows that had entries. Never modified once recorded.
type trustedSeries struct {
	tsuid  []byte
	gen    uint64
	first  int64 // ms: the hour of stored[0]
	stored []*cacheEntry
	heads  []headSeen // head rows, in time order
}

// headSeen is a head row a walk read with its entry: the hour and the
// fingerprint the head listed it with, beside the entry so that matching
// a listing reads no entry.
type headSeen struct {
	base int64
	fp   uint64
	e    *cacheEntry
}

// seenOf is head row hr, read with its entry, as a record keeps it.
func seenOf(hr *headRow) headSeen {
	return headSeen{base: hr.base, fp: hr.entry.fp, e: hr.entry}
}

// overlap returns the hours [lo, hi] (ms) of [hour, last] whose stored
// rows ts holds, unwritten since it was recorded; ok is false for none.
func (ts *trustedSeries) overlap(t *trustIndex, hour, last int64) (lo, hi int64, ok bool) {
	lo, hi = max(hour, ts.first), min(last, ts.end()-hourMs)
	if lo > hi || t.changes.ChangedOrMoved(ts.gen, lo, hi+hourMs-1) {
		return 0, 0, false
	}
	return lo, hi, true
}

// joined returns ts with the stored rows of o, a newer record of the
// same series whose hours overlap or adjoin ts's, in place of ts's at
// the hours both hold, and o's generation and head rows. The caller has
// checked that no write reached any of ts's hours since ts.gen (whole),
// so ts's rows hold at o's generation too.
func (ts *trustedSeries) joined(o *trustedSeries) *trustedSeries {
	first := min(ts.first, o.first)
	end := max(ts.end(), o.end())
	stored := make([]*cacheEntry, (end-first)/hourMs)
	copy(stored[(ts.first-first)/hourMs:], ts.stored)
	copy(stored[(o.first-first)/hourMs:], o.stored)
	return &trustedSeries{tsuid: o.tsuid, gen: o.gen, first: first, stored: stored, heads: o.heads}
}

// whole reports whether no write reached any of ts's hours since ts.gen.
func (ts *trustedSeries) whole(t *trustIndex) bool {
	return !t.changes.ChangedOrMoved(ts.gen, ts.first, ts.end()-1)
}

// end is the hour (ms) after ts's last stored row.
func (ts *trustedSeries) end() int64 { return ts.first + int64(len(ts.stored))*hourMs }

// storedAt returns the stored row of the hour at base, nil for none;
// ok is false when the record cannot answer (its entry was evicted).
func (ts *trustedSeries) storedAt(base int64) (e *cacheEntry, ok bool) {
	e = ts.stored[(base-ts.first)/hourMs]
	return e, e == nil || !e.gone.Load()
}

// headAt returns the entry of the head row at base when it is the one
// the head lists with fingerprint fp; nil otherwise. The head lists its
// rows in time order, so *next (from 0) carries the search from one
// listed row to the next.
func (ts *trustedSeries) headAt(next *int, base int64, fp uint64) *cacheEntry {
	if ts == nil {
		return nil
	}
	hs := ts.heads
	for *next < len(hs) && hs[*next].base < base {
		*next++
	}
	if i := *next; i < len(hs) && hs[i].base == base && hs[i].fp == fp && !hs[i].e.gone.Load() {
		return hs[i].e
	}
	return nil
}

// seriesKey hashes a TSUID for the series map.
func (t *trustIndex) seriesKey(tsuid []byte) uint64 { return maphash.Bytes(t.seed, tsuid) }

// findSeries returns the record of tsuid, nil if none; the caller checks
// what it covers.
func (t *trustIndex) findSeries(tsuid []byte) *trustedSeries {
	if t == nil {
		return nil
	}
	k := t.seriesKey(tsuid)
	s := &t.shards[k%trustShards]
	s.mu.Lock()
	ts := s.series[k]
	s.mu.Unlock()
	if ts == nil || !bytes.Equal(ts.tsuid, tsuid) {
		return nil
	}
	return ts
}

// cost is what ts counts against its shard: a row for itself and one a
// row it holds, and the sizes of the entries it points to.
func (ts *trustedSeries) cost() (rows int, bytes int64) {
	bytes = entriesSize(ts.stored)
	for i := range ts.heads {
		bytes += ts.heads[i].e.size()
	}
	return 1 + len(ts.stored) + len(ts.heads), bytes
}

// recordSeries keeps ts (which it then owns) as tsuid's record.
func (t *trustIndex) recordSeries(ts *trustedSeries) {
	rows, size := ts.cost()
	if rows >= trustPerShard || size > t.maxBytes {
		return
	}
	k := t.seriesKey(ts.tsuid)
	s := &t.shards[k%trustShards]
	s.mu.Lock()
	if old := s.series[k]; old != nil {
		s.sused.give(old.cost())
	}
	if !s.sused.take(rows, size, t.maxBytes) {
		clear(s.series)
	}
	s.series[k] = ts
	s.mu.Unlock()
}

// noteHeads records rows, the head rows of tsuid a read found (with rec,
// the series' record then, or nil), as the series' head rows when each
// has its entry and some did not come from rec; rec's stored rows stay
// as they were. A read of many series' head rows (readHeadRows, before
// a scan or a stream) then finds each series' rows with one lookup too.
func (t *trustIndex) noteHeads(tsuid []byte, rec *trustedSeries, rows []headRow) {
	fresh := false
	for i := range rows {
		if rows[i].entry == nil {
			return
		}
		fresh = fresh || !rows[i].memo
	}
	if !fresh {
		return
	}
	ts := &trustedSeries{tsuid: bytes.Clone(tsuid), heads: make([]headSeen, len(rows))}
	if rec != nil {
		ts.gen, ts.first, ts.stored = rec.gen, rec.first, rec.stored
	}
	for i := range rows {
		ts.heads[i] = seenOf(&rows[i])
	}
	t.recordSeries(ts)
}

// seriesWalk is what one walk of a SeriesIterator met, to record when it
// has met every hour of its range.
type seriesWalk struct {
	t   *trustIndex // nil: nothing to record or use
	rec *trustedSeries
	// recLo and recHi are the hours (ms) whose stored rows rec answers.
	recLo, recHi int64
	gen          uint64 // taken before the walk's first read
	first        int64  // ms: the walk's first hour
	stored       []*cacheEntry
	heads        []headSeen
	next         int64 // the hour the walk must meet next to stay whole
	whole        bool  // every hour met so far, each with its entry
	fresh        bool  // a row came from elsewhere than rec
	// fromRec and rowsFromRec count the stored hours rec answered and
	// those of them with a row, added to the Reader's counters when the
	// walk lets its rowReader go (count): an atomic add a row was a
	// tenth of a row's cost here.
	fromRec, rowsFromRec int64
}

// start begins a walk of a series' hours [hour, last] with rec, the
// series' record, for the hours of it rec holds (overlap); stored and
// heads are the iterator's buffers, reused. It must run after the walk has read its
// head rows: a flush that took a row out of the head before that read
// marked the row's hour first, and covers then refuses the record, whose
// store had no row there.
func (w *seriesWalk) start(t *trustIndex, rec *trustedSeries, hour, last int64, stored []*cacheEntry, heads []headSeen) {
	*w = seriesWalk{t: t, gen: t.gen(), first: hour, next: hour, whole: true, stored: stored[:0], heads: heads[:0]}
	if rec == nil {
		w.fresh = true
		return
	}
	var ok bool
	if w.recLo, w.recHi, ok = rec.overlap(t, hour, last); ok {
		w.rec = rec
	} else {
		w.fresh = true
	}
}

// fromRecord reports whether the walk's record answers the hour at base.
func (w *seriesWalk) fromRecord(base int64) bool {
	return w.rec != nil && w.recLo <= base && base <= w.recHi
}

// sawHead notes a head row read with its entry (none: the walk is not
// recorded), from the record or not.
func (w *seriesWalk) sawHead(hr *headRow) {
	if w.t == nil {
		return
	}
	if hr.entry == nil {
		w.whole = false
		return
	}
	w.heads = append(w.heads, seenOf(hr))
	w.fresh = w.fresh || !hr.memo
}

// sawStored notes the stored row of the hour at base: its entry, nil for
// no row; found is whether the row exists.
func (w *seriesWalk) sawStored(base int64, e *cacheEntry, found, fromRec bool) {
	if w.t == nil || !w.whole {
		return
	}
	if base != w.next || (found && e == nil) {
		w.whole = false
		return
	}
	w.stored = append(w.stored, e)
	w.next = base + hourMs
	w.fresh = w.fresh || !fromRec
}

// end records the walk, ended at last (ms), when it met every hour and
// took some row from elsewhere than its record, joined with the record
// when the record answered some of its hours and still holds whole (a
// record with hours written since is left to age out).
func (w *seriesWalk) end(tsuid []byte, last int64) {
	if w.t == nil || !w.whole || !w.fresh || w.next != last+hourMs || len(w.stored) == 0 {
		w.t = nil
		return
	}
	ts := &trustedSeries{tsuid: bytes.Clone(tsuid), gen: w.gen, first: w.first,
		stored: slices.Clone(w.stored), heads: slices.Clone(w.heads)}
	if w.rec != nil && w.rec.whole(w.t) {
		ts = w.rec.joined(ts)
	}
	w.t.recordSeries(ts)
	w.t = nil
}

// count adds the rows rec answered to c and zeroes the walk's counts.
func (w *seriesWalk) count(c *counters) {
	if w.fromRec > 0 {
		c.recorded.Add(w.fromRec)
		c.trusted.Add(w.fromRec)
		c.rows.Add(w.rowsFromRec)
		w.fromRec, w.rowsFromRec = 0, 0
	}
}
