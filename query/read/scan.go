package read

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// scanTask is Read's scan plan: every salt bucket of the metric in the
// range, Parallelism buckets at a time, rows of unselected series skipped,
// each selected series' stored points collected whole.
type scanTask struct {
	r    *Reader
	sel  *Selection
	ids  map[string]int32 // TSUID -> index in the selection
	accs []acc
	// lastBase is the base time (s) of the range's last row: with the
	// first row's point count it sizes a series' slice once.
	lastBase int64
}

// acc collects one selected series' stored points during a scan. Each
// series lives in one salt bucket, so one goroutine writes it.
type acc struct {
	pts   []series.Point
	notes []Note
}

// scanMetric runs the scan plan and gives fn every series with points or
// notes, merged with the head's. The head is read first, for every
// series: a row leaves the head only once the store has it, so no point
// falls between the two reads (read after the scan, a row flushed during
// it would be in neither).
func (r *Reader) scanMetric(ctx context.Context, sel *Selection, fn Func) error {
	t := &scanTask{r: r, sel: sel, ids: selectionIDs(nil, sel), accs: make([]acc, len(sel.Series)),
		lastBase: rowkey.BaseTime(sel.End)}
	hrows, hslab, offs, _, err := r.readHeadRows(ctx, sel, nil, nil, make([]int, 0, len(sel.Series)+1))
	if err != nil {
		return err
	}
	if err := r.forBuckets(ctx, t); err != nil {
		return err
	}
	rr := r.getRowReader()
	defer r.putRowReader(rr)
	for i := range sel.Series {
		s := &sel.Series[i]
		a := &t.accs[i]
		rr.head = rr.head[:0]
		for _, hr := range hrows[offs[i]:offs[i+1]] {
			rr.head = append(rr.head, clip(hr.points(hslab), sel.Start, sel.End)...)
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

// selectionIDs maps sel's TSUIDs to their indexes, in ids if not nil.
func selectionIDs(ids map[string]int32, sel *Selection) map[string]int32 {
	if ids == nil {
		ids = make(map[string]int32, len(sel.Series))
	}
	for i := range sel.Series {
		ids[sel.Series[i].TSUID] = int32(i)
	}
	return ids
}

func (t *scanTask) run(ctx context.Context, rr *rowReader, bucket int) error {
	return t.r.scanRows(ctx, rr, bucket, t.sel, t.ids, t)
}

// maxPresize bounds the points a series' slice is sized for up front.
const maxPresize = 1 << 16

// row appends the row's points to its series'.
func (t *scanTask) row(rr *rowReader, id int32, baseSec int64) error {
	a := &t.accs[id]
	n := len(a.pts)
	rr.notes = rr.notes[:0]
	var err error
	a.pts, err = rr.decode(a.pts, baseSec, t.sel.Budget)
	if n == 0 && t.lastBase > baseSec {
		// Rows of a series are alike: room for the rest of the range at
		// this row's density, instead of doubling through it.
		more := len(a.pts) * int((t.lastBase-baseSec)/3600)
		a.pts = slices.Grow(a.pts, min(more, maxPresize))
	}
	a.notes = append(a.notes, rr.notes...)
	return err
}

// rowSink takes the selected rows of a bucket scan.
type rowSink interface {
	// row takes a row of series id (its index in the selection) with base
	// time baseSec: its cells in rr.cells, its key in rr.key.
	row(rr *rowReader, id int32, baseSec int64) error
}

// scanRows scans the rows of sel's metric in one salt bucket over sel's
// range and gives sink those of the series in ids.
func (r *Reader) scanRows(ctx context.Context, rr *rowReader, bucket int, sel *Selection, ids map[string]int32, sink rowSink) error {
	l := &r.opts.Layout
	metric := sel.Series[0].TSUID[:l.Widths.Metric]
	// The row buffers live in the pooled rowReader, warm across queries.
	g := rowGroup{rr: rr, ids: ids, sink: sink, salt: l.Salt.Width(), prefix: l.Salt.Width() + len(metric), cur: -1,
		tsuid: append(rr.tsuid[:0], metric...), arena: rr.arena[:0], offs: rr.offs[:0]}
	defer func() { rr.tsuid, rr.arena, rr.offs = g.tsuid[:0], g.arena[:0], g.offs[:0] }()
	rr.want = sel.Notes
	start := l.AppendKeyPrefix(nil, bucket, g.tsuid[:len(metric)], sel.Start)
	stop := r.stopKey(bucket, g.tsuid[:len(metric)], sel.End)
	r.c.scans.Add(1)
	sc := r.opts.Data.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: r.families}})
	defer sc.Close()
	for sc.Next() {
		if err := g.add(sc.Cell()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return g.finish()
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

// rowGroup groups a scanner's cells into rows and gives its sink the
// selected ones.
type rowGroup struct {
	rr     *rowReader
	ids    map[string]int32
	sink   rowSink
	salt   int // salt width
	prefix int // salt + metric width: where the base time starts
	tsuid  []byte
	arena  []byte // the current row's cells
	offs   []cellOffs
	cur    int32 // the current row's series; -1: not selected
	base   int64 // seconds
	have   bool
}

type cellOffs struct {
	q, v, end int
	ts        int64
}

// add takes the scanner's next cell.
func (g *rowGroup) add(c storage.Cell) error {
	if !g.have || !bytes.Equal(c.Row, g.rr.key) {
		if err := g.finish(); err != nil {
			return err
		}
		g.start(c.Row)
	}
	if g.cur < 0 {
		return nil
	}
	g.arena, g.offs = appendCell(g.arena, g.offs, &c)
	return nil
}

// appendArenaCells appends the cells whose bounds in data are offs, as
// rowkey cells aliasing data.
func appendArenaCells(dst []rowkey.Cell, data []byte, offs []cellOffs) []rowkey.Cell {
	for _, o := range offs {
		dst = append(dst, rowkey.Cell{Qualifier: data[o.q:o.v], Value: data[o.v:o.end], Timestamp: o.ts})
	}
	return dst
}

// appendCell copies c's qualifier and value to data and their bounds to
// offs.
func appendCell(data []byte, offs []cellOffs, c *storage.Cell) ([]byte, []cellOffs) {
	q := len(data)
	data = append(data, c.Qualifier...)
	v := len(data)
	data = append(data, c.Value...)
	return data, append(offs, cellOffs{q: q, v: v, end: len(data), ts: c.Timestamp})
}

// start begins a row.
func (g *rowGroup) start(row []byte) {
	g.rr.key = append(g.rr.key[:0], row...)
	g.have, g.cur = true, -1
	g.arena, g.offs = g.arena[:0], g.offs[:0]
	if len(row) < g.prefix+rowkey.TimestampBytes {
		return
	}
	g.tsuid = append(g.tsuid[:g.prefix-g.salt], row[g.prefix+rowkey.TimestampBytes:]...)
	if id, ok := g.ids[string(g.tsuid)]; ok {
		g.cur = id
	}
	g.base = int64(binary.BigEndian.Uint32(row[g.prefix:]))
}

// finish gives the sink the current row if it is selected.
func (g *rowGroup) finish() error {
	if g.cur < 0 || len(g.offs) == 0 {
		return nil
	}
	rr := g.rr
	rr.cells = appendArenaCells(rr.cells[:0], g.arena, g.offs)
	g.offs = g.offs[:0]
	return g.sink.row(rr, g.cur, g.base)
}
