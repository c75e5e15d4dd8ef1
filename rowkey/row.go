package rowkey

import (
	"bytes"
	"cmp"
	"errors"
	"slices"

	"github.com/tsd-db/tsd/internal/cell"
	"github.com/tsd-db/tsd/series"
)

// Cell is one column of a data row as storage returns it: the storage
// cell itself (the type is shared through internal/cell), so a scanned
// row's cells decode as they are. The decoders read its Qualifier and
// Value, during Decode only, and compare its Timestamp, the storage
// timestamp (the writer's clock at write time); Row and Family are not
// read.
type Cell = cell.Cell

// column is one data column of a row and its precedence.
type column struct {
	cell        int
	kind        ColumnKind
	ts          int64
	writer, seq uint32
	rank        uint32
	qual        []byte
}

// rankedPoint is a decoded point and the precedence of where it came
// from: higher wins a duplicate timestamp.
type rankedPoint struct {
	p    series.Point
	rank uint64
}

// RowDecoder merges the data columns of one row, whatever their formats:
// single cells, OpenTSDB compacted columns, the appends column and dense
// columns. Of two points with one timestamp the one from the column with
// the newer cell timestamp wins, ties going to the higher writer id
// (OpenTSDB's own columns count as writer 0), then the later flush, then
// the greater qualifier; inside the appends column the later entry wins. So
// every reader answers the same value and a duplicate never fails a
// query. The zero value is ready; a warm decoder allocates nothing. Not
// safe for concurrent use.
type RowDecoder struct {
	cols  []column
	ents  []rankedPoint
	tmp   []series.Point
	dense DenseIter
	errs  []error
	// identical and variant count the points merge dropped for sharing
	// a kept point's timestamp, with its value and with another.
	identical, variant int64
}

// Duplicates returns how many points Decode dropped, since the last call,
// because a point of another column with the same timestamp won: with the
// same value (identical) and with a different one or type (variant), as
// OpenTSDB's compaction counts them; and resets both.
func (d *RowDecoder) Duplicates() (identical, variant int64) {
	identical, variant = d.identical, d.variant
	d.identical, d.variant = 0, 0
	return identical, variant
}

// Decode appends to dst the points of the row whose base time is baseSec,
// held by cells, sorted by time with one point per timestamp. Annotation,
// histogram and unknown odd-length columns are skipped. A cell that does
// not decode is left out and reported as a *CellError (joined with any
// others); the rest of the row still decodes.
func (d *RowDecoder) Decode(dst []series.Point, baseSec int64, cells []Cell) ([]series.Point, error) {
	d.errs = d.errs[:0]
	d.collect(cells)
	if len(d.cols) == 1 {
		dst = d.decodeOne(dst, baseSec, cells, &d.cols[0])
	} else if len(d.cols) > 1 {
		dst = d.merge(dst, baseSec, cells)
	}
	if len(d.errs) > 0 {
		return dst, errors.Join(d.errs...)
	}
	return dst, nil
}

// collect lists the data columns and ranks them by precedence.
func (d *RowDecoder) collect(cells []Cell) {
	d.cols = d.cols[:0]
	for i := range cells {
		q := cells[i].Qualifier
		c := column{cell: i, kind: Classify(q), ts: cells[i].Timestamp, qual: q}
		switch c.kind {
		case ColumnSingle, ColumnCompacted, ColumnAppends:
		case ColumnDense:
			var err error
			if c.writer, c.seq, err = ParseDenseQualifier(cells[i].Qualifier); err != nil {
				d.report(&cells[i], err)
				continue
			}
		default:
			continue
		}
		d.cols = append(d.cols, c)
	}
	slices.SortFunc(d.cols, cmpPrecedence)
	for i := range d.cols {
		d.cols[i].rank = uint32(i)
	}
}

func cmpPrecedence(a, b column) int {
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c
	}
	if c := cmp.Compare(a.writer, b.writer); c != 0 {
		return c
	}
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	return bytes.Compare(a.qual, b.qual)
}

func (d *RowDecoder) report(c *Cell, err error) {
	d.errs = append(d.errs, &CellError{Qualifier: bytes.Clone(c.Qualifier), Err: err})
}

// decodeColumn appends one column's points to dst; on error it reports
// the cell and returns dst unchanged.
func (d *RowDecoder) decodeColumn(dst []series.Point, baseSec int64, c *Cell, kind ColumnKind) []series.Point {
	start := len(dst)
	var err error
	switch kind {
	case ColumnSingle:
		var p series.Point
		if p, err = ParseSingle(baseSec, c.Qualifier, c.Value); err == nil {
			dst = append(dst, p)
		}
	case ColumnCompacted:
		dst, err = ParseCompacted(dst, baseSec, c.Qualifier, c.Value)
	case ColumnAppends:
		dst, err = ParseAppends(dst, baseSec, c.Value)
	case ColumnDense:
		dst, err = d.dense.DecodeDense(dst, baseSec, c.Value)
	}
	if err != nil {
		d.report(c, err)
		return dst[:start]
	}
	return dst
}

// decodeOne is the common case of a compacted row: one column, decoded
// straight into dst.
func (d *RowDecoder) decodeOne(dst []series.Point, baseSec int64, cells []Cell, c *column) []series.Point {
	start := len(dst)
	dst = d.decodeColumn(dst, baseSec, &cells[c.cell], c.kind)
	if c.kind == ColumnCompacted && !strictlySorted(dst[start:]) {
		dst = dst[:start+sortLastWins(dst[start:])]
	}
	return dst
}

func strictlySorted(pts []series.Point) bool {
	for i := 1; i < len(pts); i++ {
		if pts[i].T <= pts[i-1].T {
			return false
		}
	}
	return true
}

// merge decodes every column, then sorts by time and precedence and keeps
// the winner of each timestamp.
func (d *RowDecoder) merge(dst []series.Point, baseSec int64, cells []Cell) []series.Point {
	d.ents = d.ents[:0]
	for i := range d.cols {
		c := &d.cols[i]
		d.tmp = d.decodeColumn(d.tmp[:0], baseSec, &cells[c.cell], c.kind)
		for j, p := range d.tmp {
			d.ents = append(d.ents, rankedPoint{p: p, rank: uint64(c.rank)<<32 | uint64(j)})
		}
	}
	if !slices.IsSortedFunc(d.ents, cmpRanked) {
		slices.SortFunc(d.ents, cmpRanked)
	}
	won := 0
	for i := range d.ents {
		if i > 0 && d.ents[i].p.T == d.ents[won].p.T {
			if p, w := d.ents[i].p, d.ents[won].p; p.Kind == w.Kind && p.Bits == w.Bits {
				d.identical++
			} else {
				d.variant++
			}
			continue
		}
		won = i
		dst = append(dst, d.ents[i].p)
	}
	return dst
}

// cmpRanked orders by time, then winner first.
func cmpRanked(a, b rankedPoint) int {
	if c := cmp.Compare(a.p.T, b.p.T); c != 0 {
		return c
	}
	return cmp.Compare(b.rank, a.rank)
}
