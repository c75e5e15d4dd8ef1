package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// maxCASAttempts bounds the check-and-put rounds of one opentsdb-format
// column against writers that keep changing it.
const maxCASAttempts = 16

// columnWriter encodes detached rows as columns of the table's format and
// writes them. Its buffers are reused between batches.
type columnWriter struct {
	opts  *FlushOptions
	seq   *flushSeq
	enc   rowkey.DenseEncoder
	dec   rowkey.RowDecoder
	pts   []series.Point
	arena []byte
	spans []columnSpan
	cells []storage.Cell
	muts  []storage.Mutation
	key   []byte
	q, v  []byte
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
func cellTime(r *detachedRow, flushTs int64) int64 {
	if lw := r.row.lastWrite * 1000; lw > 0 && lw <= flushTs {
		return lw
	}
	return flushTs
}

func (w *columnWriter) init(opts *FlushOptions, seq *flushSeq) { w.opts, w.seq = opts, seq }

// write writes rows in the table's format and records in q the rows that
// need compaction.
func (w *columnWriter) write(ctx context.Context, rows []detachedRow, now time.Time, q *compactionQueue, st *FlushStats) error {
	ts := now.UnixMilli() * 1000
	if w.opts.Format == uid.FormatOpenTSDB {
		return w.writeOpenTSDB(ctx, rows, ts, q, st)
	}
	return w.writeDense(ctx, rows, ts, q, st)
}

// needsCompaction says whether the column of d will share its row with
// other columns: d is late, or its hour is not complete yet (an early
// flush at shutdown or under memory pressure), so later points will come.
func (w *columnWriter) needsCompaction(d *detachedRow, ts int64) bool {
	return d.late || ts/1000 < d.row.base+RowSpan+w.opts.Grace.Milliseconds()
}

// writeDense encodes the rows as dense columns (several for a row beyond
// rowkey.MaxDensePoints) and applies them in one storage call. Apply is not
// atomic across rows: rows written before a failure are written again
// later as another column with the same points, which readers merge and
// the compactor folds (the rows come back maybeStored).
func (w *columnWriter) writeDense(ctx context.Context, rows []detachedRow, ts int64, q *compactionQueue, st *FlushStats) error {
	w.arena, w.spans, w.cells, w.muts = w.arena[:0], w.spans[:0], w.cells[:0], w.muts[:0]
	for i := range rows {
		r := &rows[i]
		queue := w.needsCompaction(r, ts)
		w.pts = r.row.appendPoints(w.pts[:0], math.MinInt64, math.MaxInt64)
		for pts := w.pts; len(pts) > 0; {
			chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
			pts = pts[len(chunk):]
			sp, err := w.encodeDense(r, chunk)
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
	if err := w.opts.Table.Apply(ctx, w.muts); err != nil {
		return err
	}
	for _, sp := range w.spans {
		if sp.queue {
			q.add(w.span(sp.key), w.span(sp.q))
		}
	}
	st.Rows += int64(len(rows))
	st.Columns += int64(len(w.spans))
	return nil
}

func (w *columnWriter) span(s [2]int) []byte { return w.arena[s[0]:s[1]:s[1]] }

// encodeDense appends a dense column of pts (one row's, at most
// MaxDensePoints) to the arena and returns where its parts are.
func (w *columnWriter) encodeDense(r *detachedRow, pts []series.Point) (sp columnSpan, err error) {
	seq, err := w.seq.take()
	if err != nil {
		return sp, err
	}
	a := w.arena
	sp.key[0] = len(a)
	if a, err = w.opts.Layout.AppendRowKeyFromTSUID(a, keyBytes(r.s.key), r.row.base); err != nil {
		return sp, fmt.Errorf("row key of series %x: %w", r.s.key, err)
	}
	sp.key[1], sp.q[0] = len(a), len(a)
	a = rowkey.AppendDenseQualifier(a, w.opts.WriterID, seq)
	sp.q[1], sp.v[0] = len(a), len(a)
	if a, err = w.enc.Append(a, r.row.base/1000, pts); err != nil {
		return sp, fmt.Errorf("dense column of series %x at %d: %w", r.s.key, r.row.base, err)
	}
	sp.v[1] = len(a)
	w.arena = a
	return sp, nil
}

// writeOpenTSDB writes each row as OpenTSDB's compacted column (a plain
// single cell for one point) with a check-and-put expecting the column
// absent, merging with the column another writer put there first.
func (w *columnWriter) writeOpenTSDB(ctx context.Context, rows []detachedRow, ts int64, q *compactionQueue, st *FlushStats) error {
	for i := range rows {
		r := &rows[i]
		w.pts = r.row.appendPoints(w.pts[:0], math.MinInt64, math.MaxInt64)
		var err error
		if w.key, err = w.opts.Layout.AppendRowKeyFromTSUID(w.key[:0], keyBytes(r.s.key), r.row.base); err != nil {
			return fmt.Errorf("row key of series %x: %w", r.s.key, err)
		}
		if w.q, w.v, err = rowkey.AppendCompacted(w.q[:0], w.v[:0], r.row.base/1000, w.pts); err != nil {
			return fmt.Errorf("compacted column of series %x at %d: %w", r.s.key, r.row.base, err)
		}
		qual, second, err := w.putOpenTSDB(ctx, r.row.base/1000, w.q, w.v, cellTime(r, ts), st)
		if err != nil {
			return err
		}
		if second || w.needsCompaction(r, ts) {
			q.add(w.key, qual)
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
