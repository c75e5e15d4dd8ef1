package read

import (
	"context"
	"math"
	"slices"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// NoPoint marks a time PointsAt found no point at.
const NoPoint = math.MinInt64

// PointsAt returns, for every selected series (by index in sel.Series),
// its point at exactly each time of ts (ms, sorted, in [sel.Start,
// sel.End]), or a point with T NoPoint where it has none: the point a
// Visit of the series would give at that time, store and head merged.
// It serves readers of rollup cells that need the raw points on their
// windows' edges (PromQL's windows are (t−r, t], cells [k·i, (k+1)·i)):
// the rows holding those times are read (one scan per salt bucket when
// they are a good part of the range's rows, else a Get each), and a row
// of one dense column whose first point is asked for decodes one batch
// of its points, not the row. Hours where the head holds a row of the
// series are read through the core.
func (r *Reader) PointsAt(ctx context.Context, sel Selection, ts []int64) ([][]series.Point, error) {
	out := make([][]series.Point, len(sel.Series))
	if len(sel.Series) == 0 || len(ts) == 0 {
		return out, nil
	}
	backing := make([]series.Point, len(sel.Series)*len(ts))
	for i := range backing {
		backing[i].T = NoPoint
	}
	for i := range out {
		out[i] = backing[i*len(ts) : (i+1)*len(ts) : (i+1)*len(ts)]
	}
	start, err := r.clampStart(ctx, sel.Series[0].TSUID, sel.Start)
	if err != nil {
		return nil, err
	}
	// Times before the retention cutoff have no point.
	skip, _ := slices.BinarySearch(ts, start)
	if ts = ts[skip:]; len(ts) == 0 {
		return out, nil
	}
	pa := &pointsAt{r: r, sel: &sel, ts: ts, out: out, off: skip}
	pa.listHead()
	hours := 0 // distinct rows holding edges
	for k := range ts {
		if k == 0 || rowkey.BaseTime(ts[k]) != rowkey.BaseTime(ts[k-1]) {
			hours++
		}
	}
	span := (rowkey.BaseTime(ts[len(ts)-1])-rowkey.BaseTime(ts[0]))/3600 + 1
	if int64(hours)*4 >= span && len(sel.Series) > 1 {
		err = pa.scan(ctx)
	} else {
		err = pa.gets(ctx)
	}
	if err != nil {
		return nil, err
	}
	return out, pa.fromHead(ctx)
}

// pointsAt is one PointsAt.
type pointsAt struct {
	r    *Reader
	sel  *Selection
	ts   []int64
	out  [][]series.Point // out[i][off+k] is series i's point at ts[k]
	off  int
	head [][]int64 // per series: the bases (ms) of its head rows, sorted
}

// listHead lists each series' head rows over the times, before any
// stored row is read (see the package doc, Merging with the head).
func (pa *pointsAt) listHead() {
	h := pa.r.opts.Head
	if h == nil {
		return
	}
	pa.head = make([][]int64, len(pa.sel.Series))
	var refs []series.RowRef
	lo, hi := pa.ts[0], pa.ts[len(pa.ts)-1]
	for i := range pa.sel.Series {
		refs = h.AppendRows(refs[:0], []byte(pa.sel.Series[i].TSUID), lo, maxtOf(hi))
		for _, ref := range refs {
			pa.head[i] = append(pa.head[i], ref.Base)
		}
		slices.Sort(pa.head[i])
	}
}

// inHead reports whether series i has a head row at base (ms).
func (pa *pointsAt) inHead(i int, base int64) bool {
	if pa.head == nil {
		return false
	}
	_, ok := slices.BinarySearch(pa.head[i], base)
	return ok
}

// fromHead reads the times in hours with head rows through the core.
func (pa *pointsAt) fromHead(ctx context.Context) error {
	if pa.head == nil {
		return nil
	}
	for i := range pa.sel.Series {
		for k, t := range pa.ts {
			if !pa.inHead(i, rowkey.BaseTime(t)*1000) {
				continue
			}
			it := pa.r.Iterator(ctx, pa.sel.Series[i], t, t, pa.sel.Budget)
			if it.SeekTime(t) && it.At().T == t {
				pa.out[i][pa.off+k] = it.At()
			}
			err := it.Err()
			it.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// take decodes from the stored row of series i at baseSec (cells) the
// points at the times in that row, unless the head holds a row there.
func (pa *pointsAt) take(rr *rowReader, it *rowkey.DenseIter, i int, baseSec int64, cells []rowkey.Cell) error {
	base := baseSec * 1000
	if pa.inHead(i, base) {
		return nil
	}
	k, _ := slices.BinarySearch(pa.ts, base)
	if k == len(pa.ts) || pa.ts[k] >= base+hourMs {
		return nil
	}
	if pa.ts[k] == base && (k+1 == len(pa.ts) || pa.ts[k+1] >= base+hourMs) {
		if p, ok := firstDense(it, baseSec, cells); ok {
			if p.T == base {
				pa.out[i][pa.off+k] = p
			}
			return pa.sel.Budget.AddPoints(1)
		}
	}
	rr.cells = cells
	pts, err := rr.dec.Decode(rr.store[:0], baseSec, cells)
	rr.store = pts
	if err != nil {
		rr.r.corrupt(rr.key, err)
	}
	for ; k < len(pa.ts) && pa.ts[k] < base+hourMs; k++ {
		if j, ok := slices.BinarySearchFunc(pts, pa.ts[k], cmpTime); ok {
			pa.out[i][pa.off+k] = pts[j]
		}
	}
	return pa.sel.Budget.AddPoints(len(pts))
}

// firstDense returns the first point of a row made of one dense column
// (and annotations), decoding one batch; ok is false for any other row
// or a column that does not decode, which the caller decodes whole.
func firstDense(it *rowkey.DenseIter, baseSec int64, cells []rowkey.Cell) (series.Point, bool) {
	var col []byte
	for j := range cells {
		switch rowkey.Classify(cells[j].Qualifier) {
		case rowkey.ColumnAnnotation, rowkey.ColumnHistogram:
			continue
		case rowkey.ColumnDense:
			if col != nil {
				return series.Point{}, false
			}
			col = cells[j].Value
		default:
			return series.Point{}, false
		}
	}
	if col == nil {
		return series.Point{}, false
	}
	if p, ok := it.First(baseSec, col); ok {
		return p, true
	}
	if it.Reset(baseSec, col) != nil || !it.Next() {
		return series.Point{}, false
	}
	return it.At(), true
}

// gets reads each series' rows holding the times with a Get each, on up
// to Parallelism goroutines.
func (pa *pointsAt) gets(ctx context.Context) error {
	return pa.parallel(ctx, len(pa.sel.Series), func(ctx context.Context, rr *rowReader, i int) error {
		tsuid := []byte(pa.sel.Series[i].TSUID)
		last := int64(NoPoint)
		for _, t := range pa.ts {
			base := rowkey.BaseTime(t) * 1000
			if base == last {
				continue
			}
			last = base
			if pa.inHead(i, base) {
				continue
			}
			found, err := rr.getCells(ctx, tsuid, base)
			if err != nil {
				return err
			}
			if found {
				if err := pa.take(rr, &rr.edgeIt, i, base/1000, rr.cells); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// scan reads the metric's rows over the times, one scan per salt
// bucket, keeping the selected series' rows that hold one.
func (pa *pointsAt) scan(ctx context.Context) error {
	ids := make(map[string]int32, len(pa.sel.Series))
	for i := range pa.sel.Series {
		ids[pa.sel.Series[i].TSUID] = int32(i)
	}
	sel := *pa.sel
	sel.Start, sel.End = pa.ts[0], pa.ts[len(pa.ts)-1]
	return pa.parallel(ctx, pa.r.buckets(), func(ctx context.Context, rr *rowReader, b int) error {
		return pa.r.scanBucket(ctx, rr, b, &sel, ids, &edgeSink{pa: pa, it: &rr.edgeIt})
	})
}

// edgeSink is scan's scanSink: it gathers a row's batches and takes its
// points.
type edgeSink struct {
	pa  *pointsAt
	it  *rowkey.DenseIter
	row []rowkey.Cell // a row cut in batches, copied
}

func (s *edgeSink) cells(rr *rowReader, id int32, baseSec int64, cells []rowkey.Cell, first, last bool) error {
	if first && last {
		return s.pa.take(rr, s.it, int(id), baseSec, cells)
	}
	if first {
		s.row = s.row[:0]
	}
	for _, c := range cells {
		c.Row, c.Qualifier, c.Value = nil, slices.Clone(c.Qualifier), slices.Clone(c.Value)
		s.row = append(s.row, c)
	}
	if !last {
		return nil
	}
	return s.pa.take(rr, s.it, int(id), baseSec, s.row)
}

// parallel runs f(ctx, rr, j) for j in [0, n) on the Reader's worker
// pool (forEach); each worker's rowReader holds the column iterator f
// takes points with (rr.edgeIt).
func (pa *pointsAt) parallel(ctx context.Context, n int, f taskFunc) error {
	return pa.r.forEach(ctx, n, pa.r.opts.Parallelism, f)
}
