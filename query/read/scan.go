package read

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// acc collects one selected series' stored points during a scan. Each
// series lives in one salt bucket, so one goroutine writes it.
type acc struct {
	s     *index.Series
	pts   []series.Point
	notes []Note
}

// scanMetric is the scan plan: every salt bucket of the metric in the
// range, Parallelism buckets at a time, rows of unselected series skipped.
func (r *Reader) scanMetric(ctx context.Context, sel Selection, fn Func) error {
	accs := make(map[string]*acc, len(sel.Series))
	for i := range sel.Series {
		accs[sel.Series[i].TSUID] = &acc{s: &sel.Series[i]}
	}
	metric := []byte(sel.Series[0].TSUID[:r.opts.Layout.Widths.Metric])
	if err := r.scanBuckets(ctx, metric, sel, accs); err != nil {
		return err
	}
	rr := r.getRowReader()
	defer r.putRowReader(rr)
	for i := range sel.Series {
		s := &sel.Series[i]
		a := accs[s.TSUID]
		rr.head = clip(r.headPoints(rr.head[:0], []byte(s.TSUID), sel.Start, sel.End), sel.Start, sel.End)
		if err := sel.Budget.AddPoints(len(rr.head)); err != nil {
			return err
		}
		store := clip(a.pts, sel.Start, sel.End)
		notes := clipNotes(a.notes, sel.Start, sel.End)
		if len(store)+len(rr.head)+len(notes) == 0 {
			continue
		}
		pts := store
		if len(rr.head) > 0 {
			pts = mergeHead(make([]series.Point, 0, len(store)+len(rr.head)), store, rr.head)
		}
		if err := fn(*s, pts, notes); err != nil {
			return err
		}
	}
	return nil
}

// scanBuckets runs one scan per bucket, at most Parallelism at once.
func (r *Reader) scanBuckets(ctx context.Context, metric []byte, sel Selection, accs map[string]*acc) error {
	return r.forBuckets(ctx, func(ctx context.Context, b int) error {
		return r.scanBucket(ctx, b, metric, sel, accs)
	})
}

// forBuckets calls fn for every salt bucket, at most Parallelism at once,
// and returns the first error, which cancels the calls not yet done.
//
// Parallelism workers take the buckets in turn rather than one goroutine
// per bucket: each new goroutine grows its stack again through the
// store's deep iterator calls.
func (r *Reader) forBuckets(ctx context.Context, fn func(ctx context.Context, bucket int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := r.buckets()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	work := func() {
		defer wg.Done()
		for ctx.Err() == nil {
			b := int(next.Add(1)) - 1
			if b >= n {
				return
			}
			if err := fn(ctx, b); err != nil {
				cancel(err)
				return
			}
		}
	}
	workers := min(r.opts.Parallelism, n)
	wg.Add(workers)
	for range workers - 1 {
		go work()
	}
	work() // the caller is one of the workers
	wg.Wait()
	return context.Cause(ctx)
}

// scanBucket reads the rows of metric in one bucket.
func (r *Reader) scanBucket(ctx context.Context, bucket int, metric []byte, sel Selection, accs map[string]*acc) error {
	l := &r.opts.Layout
	start := l.AppendKeyPrefix(nil, bucket, metric, sel.Start)
	stop := r.stopKey(bucket, metric, sel.End)
	r.c.scans.Add(1)
	sc := r.opts.Data.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: r.families}})
	defer sc.Close()
	rs := rowScan{rr: r.getRowReader(), accs: accs, budget: sel.Budget, prefix: l.Salt.Width() + len(metric),
		lastBase: rowkey.BaseTime(sel.End)}
	rs.rr.want = sel.Notes
	defer r.putRowReader(rs.rr)
	rs.tsuid = append(rs.tsuid, metric...)
	for sc.Next() {
		if err := rs.add(sc.Cell()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return rs.finish()
}

// stopKey is the key a bucket's scan ends before: the row after the last
// hour of end, or past the metric when that hour does not fit the key.
func (r *Reader) stopKey(bucket int, metric []byte, end int64) []byte {
	l := &r.opts.Layout
	if rowkey.BaseTime(end)+3600 <= math.MaxUint32 && end <= math.MaxInt64-hourMs {
		return l.AppendKeyPrefix(nil, bucket, metric, end+hourMs)
	}
	p := append(l.Salt.AppendBucket(nil, bucket), metric...)
	for i := len(p) - 1; i >= 0; i-- {
		if p[i]++; p[i] != 0 {
			return p[:i+1]
		}
	}
	return nil
}

// rowScan groups a scanner's cells into rows and decodes selected rows.
type rowScan struct {
	rr     *rowReader
	accs   map[string]*acc
	budget *Budget
	prefix int // salt + metric width: where the base time starts
	tsuid  []byte
	arena  []byte
	offs   []cellOffs
	cur    *acc // nil: the current row is not selected
	base   int64
	have   bool
	// lastBase is the base time (s) of the range's last row: with the
	// first row's point count it sizes a series' slice once.
	lastBase int64
}

// maxPresize bounds the points a series' slice is sized for up front.
const maxPresize = 1 << 16

type cellOffs struct {
	q, v, end int
	ts        int64
}

// add takes the scanner's next cell.
func (rs *rowScan) add(c storage.Cell) error {
	if !rs.have || !bytes.Equal(c.Row, rs.rr.key) {
		if err := rs.finish(); err != nil {
			return err
		}
		rs.start(c.Row)
	}
	if rs.cur == nil {
		return nil
	}
	q := len(rs.arena)
	rs.arena = append(rs.arena, c.Qualifier...)
	v := len(rs.arena)
	rs.arena = append(rs.arena, c.Value...)
	rs.offs = append(rs.offs, cellOffs{q: q, v: v, end: len(rs.arena), ts: c.Timestamp})
	return nil
}

// start begins a row.
func (rs *rowScan) start(row []byte) {
	rs.rr.key = append(rs.rr.key[:0], row...)
	rs.have, rs.cur = true, nil
	rs.arena, rs.offs = rs.arena[:0], rs.offs[:0]
	if len(row) < rs.prefix+rowkey.TimestampBytes {
		return
	}
	rs.tsuid = append(rs.tsuid[:rs.prefix-rs.saltWidth()], row[rs.prefix+rowkey.TimestampBytes:]...)
	rs.cur = rs.accs[string(rs.tsuid)]
	rs.base = int64(binary.BigEndian.Uint32(row[rs.prefix:]))
}

func (rs *rowScan) saltWidth() int { return rs.rr.r.opts.Layout.Salt.Width() }

// finish decodes the current row if it is selected.
func (rs *rowScan) finish() error {
	if rs.cur == nil || len(rs.offs) == 0 {
		return nil
	}
	rr := rs.rr
	rr.cells = rr.cells[:0]
	for _, o := range rs.offs {
		rr.cells = append(rr.cells, rowkey.Cell{Qualifier: rs.arena[o.q:o.v], Value: rs.arena[o.v:o.end], Timestamp: o.ts})
	}
	n := len(rs.cur.pts)
	rr.notes = rr.notes[:0]
	rs.cur.pts = rr.decode(rs.cur.pts, rs.base)
	if n == 0 && rs.lastBase > rs.base {
		// Rows of a series are alike: room for the rest of the range at
		// this row's density, instead of doubling through it.
		more := len(rs.cur.pts) * int((rs.lastBase-rs.base)/3600)
		rs.cur.pts = slices.Grow(rs.cur.pts, min(more, maxPresize))
	}
	rs.cur.notes = append(rs.cur.notes, rr.notes...)
	rs.offs = rs.offs[:0]
	return rs.budget.AddPoints(len(rs.cur.pts) - n)
}
