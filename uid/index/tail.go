package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

const (
	// maxGap bounds the sequence numbers one record may skip or void; a
	// larger jump is treated as corruption rather than tracked.
	maxGap = 1 << 20
	// maxHoleScans is how many separate runs of holes a refresh re-reads
	// before it re-reads everything from the lowest hole instead.
	maxHoleScans = 32
	// Trimming: once every reader's low water is trimEvery records past the
	// checkpoint, the log up to trimKeep records below it is deleted.
	defaultTrimEvery = 4096
	defaultTrimKeep  = 1024
)

// tailState is a reader's position in the log. Sequence numbers are handed
// out in blocks, so records land out of order: a number below the highest
// seen that has no record yet is a hole, re-read every refresh until its
// record appears, a void covers it, or it is voided by the reader after
// HoleTimeout.
type tailState struct {
	mu     sync.Mutex           // one refresh at a time; guards the rest
	cursor uint64               // every number >= cursor is unseen
	holes  map[uint64]time.Time // unseen numbers < cursor → when noticed
	items  []item               // parse buffer

	trimEvery, trimKeep uint64
}

// lowWater is the lowest number this reader has not resolved.
func (t *tailState) lowWater() uint64 {
	lw := t.cursor
	for s := range t.holes {
		lw = min(lw, s)
	}
	return lw
}

// Refresh reads what other daemons logged since the last refresh: new
// series and span extensions. The loop calls it every RefreshInterval.
func (ix *Index) Refresh(ctx context.Context) error {
	t := &ix.tail
	t.mu.Lock()
	defer t.mu.Unlock()
	ix.stats.refreshes.Add(1)
	low, lowCell, err := ix.readLow(ctx)
	if err != nil {
		return err
	}
	if low > t.lowWater() {
		// Records this reader had not resolved may have been trimmed: their
		// effects are in the series rows, so read those again.
		if err := ix.resync(ctx, low); err != nil {
			return err
		}
	}
	if err := ix.scanLog(ctx, t.cursor, 0, true); err != nil {
		return err
	}
	if err := ix.recheckHoles(ctx); err != nil {
		return err
	}
	ix.voidStale(ctx)
	return ix.trimLog(ctx, low, lowCell)
}

// load fills a new Index: the series rows, then the log from the
// checkpoint.
func (ix *Index) load(ctx context.Context) error {
	t := &ix.tail
	t.holes = make(map[uint64]time.Time)
	ix.pending.m = make(map[uint32]span)
	t.trimEvery, t.trimKeep = defaultTrimEvery, defaultTrimKeep
	return ix.Refresh(ctx)
}

// resync reloads the series rows and restarts the log at low. The
// checkpoint was read before the rows, so every record below it is
// reflected in them.
func (ix *Index) resync(ctx context.Context, low uint64) error {
	t := &ix.tail
	if t.cursor > 0 {
		ix.stats.resyncs.Add(1)
	}
	if err := ix.retry(ctx, func() error { return ix.scanSeries(ctx) }); err != nil {
		return fmt.Errorf("read series rows: %w", err)
	}
	t.cursor = low
	clear(t.holes)
	return nil
}

// readLow returns the log checkpoint (1 when none) and its raw cell value
// (nil when absent), the expected value for moving it.
func (ix *Index) readLow(ctx context.Context) (uint64, []byte, error) {
	var got []storage.Cell
	err := ix.retry(ctx, func() (err error) {
		got, err = ix.meta.Get(ctx, schema.MetaSeriesIDRow, readLow)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return 1, nil, nil
	}
	if errors.As(err, new(*storage.DamagedRangeError)) {
		// The checkpoint only spares reading old records: read them all.
		if ix.firstDamage(schema.MetaSeriesIDRow) {
			ix.opts.Logger.Error("index: log checkpoint unreadable (damaged store); reading the whole log", "err", err)
		}
		return 1, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read log checkpoint: %w", err)
	}
	v := got[0].Value
	if len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
		return 0, nil, &storage.CorruptionError{Table: ix.meta.Spec().Name, Row: schema.MetaSeriesIDRow, Qualifier: qualLow,
			Err: errors.New("log checkpoint is not 8 non-zero bytes")}
	}
	return binary.BigEndian.Uint64(v), v, nil
}

// scanLog reads the records in [from, to) (to 0: to the end). advancing
// moves the cursor and notes skipped numbers as holes; otherwise only
// records filling holes are applied.
func (ix *Index) scanLog(ctx context.Context, from, to uint64, advancing bool) error {
	start, stop := appendLogRow(nil, from), []byte{schema.MetaIndexPrefix[0], tagLog + 1}
	if to != 0 {
		stop = appendLogRow(nil, to)
	}
	// Records the store cannot read back are skipped as if never written:
	// their numbers wait as holes, as a writer's that died would.
	return ix.skipDamaged(start, stop, func(start []byte) error { return ix.scanLogFrom(ctx, start, stop, advancing) })
}

// scanLogFrom reads the log records in [start, stop).
func (ix *Index) scanLogFrom(ctx context.Context, start, stop []byte, advancing bool) error {
	sc := ix.meta.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: famIndex, Qualifiers: [][]byte{qualRec}}})
	defer sc.Close()
	for sc.Next() {
		row := sc.Row()
		seq, err := parseLogRow(row.Key)
		if err != nil {
			ix.corrupt(row.Key, err)
			continue
		}
		for _, c := range row.Cells {
			ix.readRecord(seq, c.Value, advancing)
		}
	}
	if err := sc.Close(); err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	return nil
}

// readRecord applies the record at seq and updates the reader's position.
func (ix *Index) readRecord(seq uint64, value []byte, advancing bool) {
	t := &ix.tail
	if _, hole := t.holes[seq]; !advancing && !hole {
		return
	}
	if advancing && seq > t.cursor {
		ix.noteHoles(t.cursor, seq)
	}
	delete(t.holes, seq)
	t.cursor = max(t.cursor, seq+1)
	rec, err := parseRecord(value, t.items)
	if err != nil {
		ix.corrupt(appendLogRow(nil, seq), err)
		return
	}
	t.items = rec.items[:0]
	switch rec.kind {
	case recVoid:
		ix.readVoid(seq, rec.voidLast)
	case recNew:
		ix.learn(rec.items)
	case recHours:
		ix.widenLogged(rec.items)
	}
}

// noteHoles records [from, to) as holes.
func (ix *Index) noteHoles(from, to uint64) {
	if to-from > maxGap {
		ix.corrupt(appendLogRow(nil, to), fmt.Errorf("log jumps from %d to %d", from, to))
		return
	}
	now := ix.opts.Clock()
	for s := from; s < to; s++ {
		ix.tail.holes[s] = now
	}
}

// readVoid resolves [seq, last]: numbers a writer gave up.
func (ix *Index) readVoid(seq, last uint64) {
	t := &ix.tail
	if last < seq || last-seq > maxGap {
		ix.corrupt(appendLogRow(nil, seq), fmt.Errorf("void of [%d, %d]", seq, last))
		return
	}
	for s := range t.holes {
		if s >= seq && s <= last {
			delete(t.holes, s)
		}
	}
	t.cursor = max(t.cursor, last+1)
}

// learn adds the series of a recNew record.
func (ix *Index) learn(items []item) {
	for _, it := range items {
		if err := checkTSUID(ix.opts.Widths, it.tsuid); err != nil {
			ix.corrupt(appendTSUIDRow(nil, it.tsuid), err)
			continue
		}
		ix.addStored(it.id, it.tsuid, it.sp)
	}
}

// addStored adds a series read from the store, merging what is known.
func (ix *Index) addStored(id uint32, tsuid []byte, sp span) {
	e, fresh := ix.mem.add(id, tsuid, sp)
	switch {
	case e == nil || e.id != id:
		ix.stats.conflicts.Add(1)
		ix.opts.Logger.Warn("index: a series id or TSUID is stored twice; keeping the first", "id", id, "tsuid", fmt.Sprintf("%x", tsuid))
		return
	case fresh:
		ix.stats.learned.Add(1)
	default:
		e.widen(sp)
	}
	ix.takePending(e)
}

// widenLogged applies a recHours record. Spans of ids not known yet wait
// in pending until the series is added (by a refresh or a registration):
// the lock makes "not known" and "added" exclusive, so none is lost.
func (ix *Index) widenLogged(items []item) {
	ix.pending.Lock()
	defer ix.pending.Unlock()
	for _, it := range items {
		if e := ix.mem.byID(it.id); e != nil {
			e.widen(it.sp)
			continue
		}
		p, ok := ix.pending.m[it.id]
		if !ok {
			p = noSpan
		}
		ix.pending.m[it.id] = p.merge(it.sp)
	}
}

// takePending applies the span waiting for a series just added.
func (ix *Index) takePending(e *seriesEntry) {
	ix.pending.Lock()
	defer ix.pending.Unlock()
	if p, ok := ix.pending.m[e.id]; ok {
		e.widen(p)
		delete(ix.pending.m, e.id)
	}
}

// recheckHoles re-reads the holes, run by run.
func (ix *Index) recheckHoles(ctx context.Context) error {
	t := &ix.tail
	if len(t.holes) == 0 {
		return nil
	}
	seqs := make([]uint64, 0, len(t.holes))
	for s := range t.holes {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	runs := holeRuns(seqs)
	if len(runs) > maxHoleScans {
		runs = [][2]uint64{{seqs[0], t.cursor}}
	}
	for _, r := range runs {
		if err := ix.scanLog(ctx, r[0], r[1], false); err != nil {
			return err
		}
	}
	return nil
}

// holeRuns groups sorted numbers into half-open runs [first, last+1).
func holeRuns(seqs []uint64) [][2]uint64 {
	var runs [][2]uint64
	for _, s := range seqs {
		if n := len(runs); n > 0 && runs[n-1][1] == s {
			runs[n-1][1] = s + 1
		} else {
			runs = append(runs, [2]uint64{s, s + 1})
		}
	}
	return runs
}

// voidStale writes a void into every hole older than HoleTimeout. The write
// is a CheckAndPut expecting no record, so a writer that was only slow
// either got there first (and the hole is read next time) or finds the void
// and logs again under a new number.
func (ix *Index) voidStale(ctx context.Context) {
	t := &ix.tail
	now := ix.opts.Clock()
	for s, at := range t.holes {
		if now.Sub(at) < ix.opts.HoleTimeout {
			continue
		}
		ok, err := ix.putRecord(ctx, s, appendVoidRecord(nil, s))
		if err != nil {
			ix.opts.Logger.Warn("index: void a stale log hole", "seq", s, "err", err)
			continue
		}
		if ok {
			delete(t.holes, s)
			ix.stats.voided.Add(1)
		}
	}
}

// trimLog moves the checkpoint up to trimKeep records below this reader's
// low water, once that is trimEvery records past it, and deletes the
// records below. Records below the checkpoint are reflected in the series
// rows; a reader that had not resolved them resyncs.
func (ix *Index) trimLog(ctx context.Context, low uint64, lowCell []byte) error {
	t := &ix.tail
	lw := t.lowWater()
	if lw < low+t.trimEvery+t.trimKeep {
		return nil
	}
	newLow := lw - t.trimKeep
	cells := []storage.Cell{{Family: schema.MetaFamilyIndex, Qualifier: qualLow, Value: binary.BigEndian.AppendUint64(nil, newLow)}}
	err := ix.meta.CheckAndPut(ctx, schema.MetaSeriesIDRow, schema.MetaFamilyIndex, qualLow, lowCell, cells)
	if errors.Is(err, storage.ErrConflict) {
		return nil // another reader moved it
	}
	if err != nil {
		return fmt.Errorf("move log checkpoint: %w", err)
	}
	return ix.deleteLog(ctx, low, newLow)
}

// deleteLog deletes the index family of log rows [from, to), in batches.
func (ix *Index) deleteLog(ctx context.Context, from, to uint64) error {
	const batch = 1024
	for from < to {
		n := min(to-from, batch)
		muts := make([]storage.Mutation, n)
		for i := range muts {
			muts[i] = storage.Mutation{Row: appendLogRow(nil, from+uint64(i)),
				Deletes: []storage.Deletion{{Kind: storage.DeleteFamily, Family: schema.MetaFamilyIndex}}}
		}
		if err := ix.retry(ctx, func() error { return ix.meta.Apply(ctx, muts) }); err != nil {
			return fmt.Errorf("delete log records: %w", err)
		}
		from += n
	}
	return nil
}

// corrupt logs a stored row this Index cannot use and counts it.
func (ix *Index) corrupt(row []byte, err error) {
	ix.stats.corrupt.Add(1)
	ix.opts.Logger.Warn("index: skipping a damaged index row", "row", fmt.Sprintf("%x", row), "err", err)
}
