package tsmeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// Mode is what tracking keeps, after OpenTSDB's tsd.core.meta keys.
type Mode uint8

const (
	// TrackOff keeps nothing (the default).
	TrackOff Mode = iota
	// TrackLast writes the counter as 1 and the latest arrival
	// (enable_tsuid_tracking without enable_tsuid_incrementing).
	TrackLast
	// TrackCount adds the points to the daemon's counter, writes the
	// latest arrival and the creation (enable_tsuid_incrementing or
	// enable_realtime_ts).
	TrackCount
)

// Row is one flushed row as tracking sees it.
type Row struct {
	// TSUID is the series' TSUID; Track does not keep it.
	TSUID []byte
	// Points is how many points the row held.
	Points int64
	// LastWrite is the arrival of the row's latest point, Unix ms.
	LastWrite int64
}

// Tracker applies tracking to flushed rows. Its Track calls must not
// overlap (the flusher runs one flush at a time): each daemon's counter
// cell is read and rewritten by that daemon alone.
type Tracker struct {
	s    *Store
	mode Mode
	qual []byte // this daemon's counter qualifier, ts_ctr.‖writer id
	// agg is a batch merged by series, reused between calls.
	agg []Row
}

// NewTracker returns a Tracker writing through s for the daemon with
// writerID (flush.LoadWriterID); nil when mode is TrackOff.
func NewTracker(s *Store, mode Mode, writerID uint32) *Tracker {
	if mode == TrackOff {
		return nil
	}
	q := binary.BigEndian.AppendUint32(append([]byte(nil), qualWriterCounter...), writerID)
	return &Tracker{s: s, mode: mode, qual: q}
}

// readWorkers bounds the counter reads of one Track call in flight at
// once: each is a round trip on a remote store.
const readWorkers = 8

// Track records rows: per series, its counter (this daemon's total plus
// the batch's points, or 1 when marking), the latest arrival and, when
// counting, the creation, all in one Apply with no synced write per row.
func (t *Tracker) Track(ctx context.Context, rows []Row) error {
	if t == nil || len(rows) == 0 {
		return nil
	}
	agg := t.aggregate(rows)
	var totals []int64
	if t.mode == TrackCount {
		var err error
		if totals, err = t.readTotals(ctx, agg); err != nil {
			return err
		}
	}
	if err := t.s.t.Apply(ctx, t.mutations(agg, totals)); err != nil {
		return fmt.Errorf("tsmeta: track: %w", err)
	}
	return nil
}

// aggregate merges the rows of one series (several hours in one batch),
// sorting a copy of the batch by TSUID.
func (t *Tracker) aggregate(rows []Row) []Row {
	t.agg = append(t.agg[:0], rows...)
	slices.SortFunc(t.agg, func(a, b Row) int { return bytes.Compare(a.TSUID, b.TSUID) })
	out := t.agg[:0]
	for _, r := range t.agg {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].TSUID, r.TSUID) {
			out[n-1].Points += r.Points
			out[n-1].LastWrite = max(out[n-1].LastWrite, r.LastWrite)
			continue
		}
		out = append(out, r)
	}
	t.agg = out
	return out
}

// readTotals reads this daemon's counter of each series.
func (t *Tracker) readTotals(ctx context.Context, agg []Row) ([]int64, error) {
	totals := make([]int64, len(agg))
	opts := &storage.ReadOptions{Families: []string{schema.MetaFamilyTSMeta}, Qualifiers: [][]byte{t.qual}}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range min(readWorkers, len(agg)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var row []byte
			for i := range next {
				row = AppendRow(row[:0], agg[i].TSUID)
				cells, err := t.s.t.Get(ctx, row, opts)
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					mu.Lock()
					first = cmpErr(first, fmt.Errorf("tsmeta: read counter %X: %w", agg[i].TSUID, err))
					mu.Unlock()
					continue
				}
				for _, c := range cells {
					if bytes.Equal(c.Qualifier, t.qual) {
						totals[i] = be64(c.Value)
					}
				}
			}
		}()
	}
	for i := range agg {
		next <- i
	}
	close(next)
	wg.Wait()
	return totals, first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// mutations builds the batch's puts in one arena sized up front (cells
// and rows point into it, so it must never move).
func (t *Tracker) mutations(agg []Row, totals []int64) []storage.Mutation {
	muts := make([]storage.Mutation, 0, len(agg))
	cells := make([]storage.Cell, 0, 3*len(agg))
	size := 0
	for _, r := range agg {
		size += 24 + len(schema.MetaTSMetaPrefix) + len(r.TSUID)
	}
	arena := make([]byte, 0, size)
	put := func(q []byte, ts int64, v uint64) {
		arena = binary.BigEndian.AppendUint64(arena, v)
		cells = append(cells, storage.Cell{Family: schema.MetaFamilyTSMeta, Qualifier: q, Timestamp: ts, Value: arena[len(arena)-8:]})
	}
	for i, r := range agg {
		n := len(cells)
		if lw := r.LastWrite; lw > 0 {
			put(qualLast, lw*1000, uint64(lw))
			if sec := lw / 1000; t.mode == TrackCount && sec < createdLimit {
				put(qualCreated, (createdLimit-sec)*1000, uint64(sec))
			}
		}
		switch t.mode {
		case TrackLast:
			put(qualCounter, 0, 1)
		case TrackCount:
			put(t.qual, 0, uint64(totals[i]+r.Points))
		}
		arena = AppendRow(arena, r.TSUID)
		muts = append(muts, storage.Mutation{Row: arena[len(arena)-len(schema.MetaTSMetaPrefix)-len(r.TSUID):], Cells: cells[n:len(cells):len(cells)]})
	}
	return muts
}
