package flush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// maxCASAttempts bounds the check-and-put rounds of one opentsdb-format
// column against writers that keep changing it.
const maxCASAttempts = 16

// columnWriter encodes detached rows as columns of the table's format and
// writes them. Its buffers are reused between batches.
type columnWriter struct {
	opts  *FlushOptions
	seq   *flushSeq
	top   *flushTop
	roll  *rollupWriter // nil without rollups
	enc   rowkey.DenseEncoder
	dec   rowkey.RowDecoder
	pts   []series.Point
	arena []byte
	spans []columnSpan
	cells []storage.Cell
	muts  []storage.Mutation
	key   []byte
	q, v  []byte
	// inBatch holds the rows whose first column took the batch's flush
	// number (firstInBatch).
	inBatch map[head.RowIdent]struct{}
	// tracked lists the rows of the batch for FlushOptions.Tracker; its
	// TSUIDs alias the head's keys until the rows are finished.
	tracked []tsmeta.Row
	// whole pairs each row the batch writes as one column with its span,
	// for FlushOptions.Moved.
	whole [][2]int
}

// columnSpan locates one encoded column in the arena.
type columnSpan struct {
	key, q, v [2]int
	ts        int64 // cell timestamp, µs
	queue     bool
}

// cellTime is the timestamp of a row's column: the arrival of the row's
// latest point (µs), not the flush time, so that where two daemons wrote
// the same timestamp, readers (rowkey.RowDecoder: newer cell wins) keep the
// value that arrived last whichever daemon flushes last. A row without an
// arrival time, or one stamped after flushTs by a skewed clock, gets
// flushTs.
func cellTime(r *head.DetachedRow, flushTs int64) int64 {
	if lw := r.LastWrite() * 1000; lw > 0 && lw <= flushTs {
		return lw
	}
	return flushTs
}

func (w *columnWriter) init(opts *FlushOptions, seq *flushSeq, top *flushTop, roll *rollupWriter) {
	w.opts, w.seq, w.top, w.roll = opts, seq, top, roll
}

// write writes rows in the table's format and records in q the rows that
// need compaction, then writes the rows' rollup cells. An error in either
// fails the batch: its rows go back to the head, to be written again as
// possibly stored (so queued, and their cells computed again).
func (w *columnWriter) write(ctx context.Context, rows []head.DetachedRow, now time.Time, q *compactionQueue, st *FlushStats) error {
	ts := now.UnixMilli() * 1000
	w.tracked = w.tracked[:0]
	hi := int64(0)
	lo := int64(math.MaxInt64)
	for i := range rows {
		hi = max(hi, rows[i].Base()+head.RowSpan)
		lo = min(lo, rows[i].Base())
	}
	if c := w.opts.Changes; c != nil && len(rows) > 0 {
		defer c.MarkMoved(lo, hi-1) // after the write, stored or failed
	}
	if err := w.top.raise(hi); err != nil {
		return err
	}
	if w.roll != nil {
		w.roll.mu.Lock()
		defer w.roll.mu.Unlock()
		w.roll.reset()
	}
	var err error
	grouped := false
	switch {
	case w.opts.Format == schema.FormatOpenTSDB:
		err = w.writeOpenTSDB(ctx, rows, ts, q, st)
	case w.roll != nil && w.roll.cache != nil:
		// A sole writer commits the raw columns with their rollup cells:
		// one commit and one sync for the batch, not one per table;
		// unless a row's cells are folded from the stored row, which
		// must hold the new column first.
		if err = w.encodeDenseBatch(rows, ts, st); err != nil {
			break
		}
		if w.roll.readsBack() {
			if err = w.opts.Table.Apply(ctx, w.muts); err == nil {
				w.finishDense(rows, q, st)
			}
			break
		}
		w.roll.pre = append(w.roll.pre[:0], storage.TableMutations{Table: w.opts.Table, Muts: w.muts})
		grouped = true
	default:
		err = w.writeDense(ctx, rows, ts, q, st)
	}
	if err != nil || w.roll == nil {
		return err
	}
	var rs RollupStats
	err = w.roll.flushNoted(ctx, ts, &rs)
	w.roll.total.add(rs)
	if err == nil && grouped {
		w.finishDense(rows, q, st)
		w.roll.grouped++
	}
	return err
}

// noteRollup records row r for its rollup cells: from pts when they are
// surely the row's whole set, else read back after the write. They are
// when the column is not queued (the head knows of no other column of
// this process's, its 64-hour memory of flushed rows counting anything
// older as flushed) and no earlier process can have written the hour: it
// began after the flusher started and after every hour an earlier
// process wrote (FLUSHTOP: one may have flushed a later hour early, at
// shutdown or for a client whose clock runs ahead), and lies within 60
// hours of now.
func (w *columnWriter) noteRollup(r *head.DetachedRow, pts []series.Point, queued bool, nowMs int64) error {
	if w.roll == nil {
		return nil
	}
	if queued || r.Base() < w.roll.startMs || nowMs-r.Base() > rollupTrustHead {
		pts = nil
	}
	return w.roll.note(r.Key(), r.Base()/1000, pts, w.roll.heldRanges(r.Base()/1000, r.HoldsRowIn))
}

// needsCompaction says whether the column of d will share its row with
// other columns: d is late, or its hour is not complete yet (an early
// flush at shutdown or under memory pressure), so later points will come.
func (w *columnWriter) needsCompaction(d *head.DetachedRow, ts int64) bool {
	return d.Late() || ts/1000 < d.Base()+head.RowSpan+w.opts.Grace.Milliseconds()
}

// writeDense encodes the rows as dense columns (several for a row beyond
// rowkey.MaxDensePoints) and applies them in one storage call. Apply is not
// atomic across rows: rows written before a failure are written again
// later as another column with the same points, which readers merge and
// the compactor folds (the rows come back maybeStored).
func (w *columnWriter) writeDense(ctx context.Context, rows []head.DetachedRow, ts int64, q *compactionQueue, st *FlushStats) error {
	if err := w.encodeDenseBatch(rows, ts, st); err != nil {
		return err
	}
	if err := w.opts.Table.Apply(ctx, w.muts); err != nil {
		return err
	}
	w.finishDense(rows, q, st)
	return nil
}

// encodeDenseBatch encodes the rows' dense columns as mutations in
// w.muts (notes their rollups, counts their points).
func (w *columnWriter) encodeDenseBatch(rows []head.DetachedRow, ts int64, st *FlushStats) error {
	w.arena, w.spans, w.cells, w.muts, w.whole = w.arena[:0], w.spans[:0], w.cells[:0], w.muts[:0], w.whole[:0]
	batchSeq, err := w.seq.take()
	if err != nil {
		return err
	}
	if w.inBatch == nil {
		w.inBatch = make(map[head.RowIdent]struct{}, len(rows))
	}
	defer clear(w.inBatch) // drop series pointers
	for i := range rows {
		r := &rows[i]
		queue := w.needsCompaction(r, ts)
		w.pts = r.AppendPoints(w.pts[:0])
		w.trackRow(r, ts)
		if err := w.noteRollup(r, w.pts, queue, ts/1000); err != nil {
			return err
		}
		seq, shared := batchSeq, w.firstInBatch(r)
		if shared && len(w.pts) <= rowkey.MaxDensePoints {
			w.whole = append(w.whole, [2]int{i, len(w.spans)})
		}
		for pts := w.pts; len(pts) > 0; {
			chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
			pts = pts[len(chunk):]
			if !shared {
				if seq, err = w.seq.take(); err != nil {
					return err
				}
			}
			shared = false
			sp, err := w.encodeDense(r, chunk, seq)
			if err != nil {
				return err
			}
			sp.queue, sp.ts = queue, cellTime(r, ts)
			w.spans = append(w.spans, sp)
			st.Points += int64(len(chunk))
		}
	}
	for _, sp := range w.spans {
		w.cells = append(w.cells, storage.Cell{
			Family: w.opts.Family, Timestamp: sp.ts,
			Qualifier: w.span(sp.q), Value: w.span(sp.v),
		})
		w.muts = append(w.muts, storage.Mutation{Row: w.span(sp.key)})
	}
	for i := range w.muts {
		w.muts[i].Cells = w.cells[i : i+1 : i+1]
	}
	return nil
}

// finishDense records, once w.muts are written, the columns that need
// compaction, counts rows and columns, and tells FlushOptions.Moved of the
// rows written as one column.
func (w *columnWriter) finishDense(rows []head.DetachedRow, q *compactionQueue, st *FlushStats) {
	for _, sp := range w.spans {
		if sp.queue {
			q.add(w.span(sp.key), w.span(sp.q))
		}
	}
	st.Rows += int64(len(rows))
	st.Columns += int64(len(w.spans))
	if m := w.opts.Moved; m != nil {
		for _, rs := range w.whole {
			r, sp := &rows[rs[0]], w.spans[rs[1]]
			m.RowMoved(r.Key(), r.Base(), r.FP(), w.span(sp.key), w.cells[rs[1]:rs[1]+1])
		}
	}
}

// trackRow notes a row for the tracker: its points (w.pts) and the
// arrival of its latest point (the flush time, ts µs, when unknown).
func (w *columnWriter) trackRow(r *head.DetachedRow, ts int64) {
	if w.opts.Tracker == nil {
		return
	}
	lw := r.LastWrite()
	if lw <= 0 {
		lw = ts / 1000
	}
	w.tracked = append(w.tracked, tsmeta.Row{TSUID: r.Key(), Points: int64(len(w.pts)), LastWrite: lw})
}

func (w *columnWriter) span(s [2]int) []byte { return w.arena[s[0]:s[1]:s[1]] }

// firstInBatch reports whether r is the batch's first row of its series
// and hour, and notes it. That row's first column takes the batch's flush
// number: a flush number only has to tell the columns of one row apart,
// and one number repeated in every key of the batch is stored about once
// by the store's block compression (docs/formats.md, tsd's dense column).
// A row's further columns, and a row met twice, take numbers of their own,
// later than the batch's, as one number per column gave them before.
func (w *columnWriter) firstInBatch(r *head.DetachedRow) bool {
	id := r.Ident()
	if _, dup := w.inBatch[id]; dup {
		return false
	}
	w.inBatch[id] = struct{}{}
	return true
}

// encodeDense appends a dense column of pts (one row's, at most
// MaxDensePoints) with flush number seq to the arena and returns where
// its parts are.
func (w *columnWriter) encodeDense(r *head.DetachedRow, pts []series.Point, seq uint32) (sp columnSpan, err error) {
	a := w.arena
	sp.key[0] = len(a)
	if a, err = w.opts.Layout.AppendRowKeyFromTSUID(a, r.Key(), r.Base()); err != nil {
		return sp, fmt.Errorf("row key of series %x: %w", r.Key(), err)
	}
	sp.key[1], sp.q[0] = len(a), len(a)
	a = rowkey.AppendDenseQualifier(a, w.opts.WriterID, seq)
	sp.q[1], sp.v[0] = len(a), len(a)
	if a, err = w.enc.Append(a, r.Base()/1000, pts); err != nil {
		return sp, fmt.Errorf("dense column of series %x at %d: %w", r.Key(), r.Base(), err)
	}
	sp.v[1] = len(a)
	w.arena = a
	return sp, nil
}

// writeOpenTSDB writes each row as OpenTSDB's compacted column (a plain
// single cell for one point) with a check-and-put expecting the column
// absent, merging with the column another writer put there first.
func (w *columnWriter) writeOpenTSDB(ctx context.Context, rows []head.DetachedRow, ts int64, q *compactionQueue, st *FlushStats) error {
	for i := range rows {
		r := &rows[i]
		w.pts = r.AppendPoints(w.pts[:0])
		w.trackRow(r, ts)
		var err error
		if w.key, err = w.opts.Layout.AppendRowKeyFromTSUID(w.key[:0], r.Key(), r.Base()); err != nil {
			return fmt.Errorf("row key of series %x: %w", r.Key(), err)
		}
		if w.q, w.v, err = rowkey.AppendCompacted(w.q[:0], w.v[:0], r.Base()/1000, w.pts); err != nil {
			return fmt.Errorf("compacted column of series %x at %d: %w", r.Key(), r.Base(), err)
		}
		qual, second, err := w.putOpenTSDB(ctx, r.Base()/1000, w.q, w.v, cellTime(r, ts), st)
		if err != nil {
			return err
		}
		queue := second || w.needsCompaction(r, ts)
		if queue {
			q.add(w.key, qual)
		}
		if err := w.noteRollup(r, w.pts, queue, ts/1000); err != nil {
			return err
		}
		st.Points += int64(len(w.pts))
		st.Columns++
	}
	st.Rows += int64(len(rows))
	return nil
}

// putOpenTSDB writes the column (q, v) into row w.key unless another
// writer wrote that qualifier: then it merges the two (the newer cell
// winning a shared timestamp, as readers decide) and writes the merge
// expecting the other writer's exact value, until it sticks. It returns the
// qualifier written and whether it is a second column of the row (a merge
// that changed a value's width, hence the qualifier).
func (w *columnWriter) putOpenTSDB(ctx context.Context, baseSec int64, q, v []byte, ts int64, st *FlushStats) ([]byte, bool, error) {
	var expected []byte
	second := false
	for range maxCASAttempts {
		cell := []storage.Cell{{Family: w.opts.Family, Qualifier: q, Timestamp: ts, Value: v}}
		err := w.opts.Table.CheckAndPut(ctx, w.key, w.opts.Family, q, expected, cell)
		if !errors.Is(err, storage.ErrConflict) {
			return q, second, err
		}
		st.Conflicts++
		cur, curTs, found, err := w.readColumn(ctx, q)
		if err != nil {
			return q, second, err
		}
		if !found { // deleted meanwhile (compacted): try again as new
			expected = nil
			continue
		}
		q2, v2 := w.mergeColumns(baseSec, q, cur, curTs, v, ts)
		switch {
		case !bytes.Equal(q2, q):
			q, v, expected, second = q2, v2, nil, true
		case bytes.Equal(v2, cur):
			return q, second, nil // what we would write is there
		default:
			v, expected = v2, cur
		}
	}
	return q, second, fmt.Errorf("row %x column %x changed %d times while writing: %w", w.key, q, maxCASAttempts, storage.ErrConflict)
}

// readColumn reads the newest version of column q of row w.key.
func (w *columnWriter) readColumn(ctx context.Context, q []byte) (v []byte, ts int64, found bool, err error) {
	cells, err := w.opts.Table.Get(ctx, w.key, &storage.ReadOptions{Families: []string{w.opts.Family}, Qualifiers: [][]byte{q}})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && len(cells) == 0) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	return cells[0].Value, cells[0].Timestamp, true, nil
}

// mergeColumns merges two versions of one compacted column as a reader
// would and re-encodes the result. A version that does not decode is
// dropped with a warning: it would be skipped by every reader anyway.
func (w *columnWriter) mergeColumns(baseSec int64, q, cur []byte, curTs int64, v []byte, ts int64) ([]byte, []byte) {
	cells := []rowkey.Cell{{Qualifier: q, Value: cur, Timestamp: curTs}, {Qualifier: q, Value: v, Timestamp: ts}}
	pts, err := w.dec.Decode(nil, baseSec, cells)
	if err != nil {
		w.opts.logger().Warn("ingest: flush: replacing an undecodable column", "row", fmt.Sprintf("%x", w.key), "err", err)
	}
	q2, v2, err := rowkey.AppendCompacted(nil, nil, baseSec, pts)
	if err != nil { // cannot happen: decoded points are sorted and unique
		return bytes.Clone(q), bytes.Clone(v)
	}
	return q2, v2
}
