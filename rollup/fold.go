package rollup

import (
	"math"

	"github.com/tsd-db/tsd/series"
)

// Agg is one of the four aggregates tsd computes per cell.
type Agg uint8

// The aggregates, in the order of a packed row's sections.
const (
	Sum Agg = iota
	Count
	Min
	Max
	NumAggs
)

var aggNames = [NumAggs]string{"sum", "count", "min", "max"}

// String is the aggregator's OpenTSDB name.
func (a Agg) String() string { return aggNames[a] }

// AggIDs are the configured ids of Sum, Count, Min and Max; -1 where none.
type AggIDs [NumAggs]int

// Cell is the aggregates of one series over one interval: the fold of the
// raw points whose time falls in [T, T + interval).
type Cell struct {
	// T is the interval's first millisecond.
	T int64
	// Count is the number of points (Prometheus staleness markers do not
	// count).
	Count int64
	// Sum, Min and Max are points at T. Sum is an integer while every
	// input is one and the sum fits, else a Float64; Min and Max keep the
	// kind of the point they are.
	Sum, Min, Max series.Point
	// First is the point at exactly T when Edge is EdgePoint.
	First series.Point
	// Edge says what c knows of a point at exactly T (PromQL's windows
	// are (t−r, t]: the point at a cell's start is the one leaving or
	// entering a window made of cells).
	Edge Edge
	// Missing has bit 1<<a set for each aggregate a the stored row does
	// not hold (an OpenTSDB row with only some aggregator columns, read by
	// a RowReader with Partial); such an aggregate's field is zero. Cells
	// tsd folds or writes are whole: 0. (Edge and Missing side by side
	// keep a Cell at 120 bytes: query reads keep a month of them per
	// series.)
	Missing uint8
}

// Edge is what a Cell knows of a point at exactly its start.
type Edge uint8

// The edge states. The zero value is EdgeUnknown: a cell decoded from an
// OpenTSDB column or an encoding that predates the first point, whose
// reader must read that point raw.
const (
	EdgeUnknown Edge = iota
	EdgeNone         // no point (or only a staleness marker) at T
	EdgePoint        // Cell.First is the point at T
)

// Has reports whether c holds aggregate a.
func (c *Cell) Has(a Agg) bool { return c.Missing&(1<<a) == 0 }

// Value returns aggregate a of c as a point at c.T.
func (c *Cell) Value(a Agg) series.Point {
	switch a {
	case Sum:
		return c.Sum
	case Count:
		return series.IntPoint(c.T, c.Count)
	case Min:
		return c.Min
	}
	return c.Max
}

// add folds one point (or one finer cell's aggregates) into c.
func (c *Cell) add(sum, min, max series.Point, n int64) {
	if c.Count == 0 {
		c.Sum, c.Min, c.Max = at(sum, c.T), at(min, c.T), at(max, c.T)
		c.Count = n
		return
	}
	c.Count += n
	c.Sum = addSum(c.Sum, sum)
	if replaces(min, c.Min, false) {
		c.Min = at(min, c.T)
	}
	if replaces(max, c.Max, true) {
		c.Max = at(max, c.T)
	}
}

func at(p series.Point, t int64) series.Point { p.T = t; return p }

// addSum adds b to a: exact int64 while both are integers and the sum does
// not overflow, else float64 in the order given.
func addSum(a, b series.Point) series.Point {
	if a.Kind == series.Int && b.Kind == series.Int {
		x, y := int64(a.Bits), int64(b.Bits)
		s := x + y
		if (s > x) == (y > 0) {
			return series.Point{T: a.T, Bits: uint64(s), Kind: series.Int}
		}
	}
	return series.Float64Point(a.T, a.Float()+b.Float())
}

// replaces reports whether v takes cur's place as the minimum (or the
// maximum): numerically, integers compared exactly, an equal value keeps
// cur, and a NaN loses to any number (as Prometheus's min_over_time and
// max_over_time treat it), so it survives only when every value is NaN.
func replaces(v, cur series.Point, max bool) bool {
	if v.Kind == series.Int && cur.Kind == series.Int {
		if max {
			return int64(v.Bits) > int64(cur.Bits)
		}
		return int64(v.Bits) < int64(cur.Bits)
	}
	x, y := v.Float(), cur.Float()
	switch {
	case math.IsNaN(x):
		return false
	case math.IsNaN(y):
		return true
	case max:
		return x > y
	}
	return x < y
}

// Fold appends to dst the cells of iv in the row starting at base holding
// pts: sorted by time, one point per timestamp (a decoded row), every one
// inside that row. Staleness markers are left out; a cell with no point
// is not emitted. Each cell's Edge and First say whether a point sits at
// exactly its start and which. The result is a function of pts alone.
func Fold(dst []Cell, iv *Interval, base int64, pts []series.Point) []Cell {
	var c *Cell
	var hi int64 // the end of c's interval, ms
	for i := 0; i < len(pts); i++ {
		p := &pts[i]
		if p.IsStale() {
			continue
		}
		if c == nil || p.T >= hi { // pts are sorted: a point below hi is c's
			idx := iv.Index(base, floorDiv(p.T, 1000))
			dst = append(dst, Cell{T: iv.CellStart(base, idx), Edge: EdgeNone})
			c, hi = &dst[len(dst)-1], iv.CellStart(base, idx+1)
			if p.T == c.T {
				c.Edge, c.First = EdgePoint, *p
			}
		}
		if c.Count > 0 && p.Kind == series.Int && c.allInts() {
			if j := c.addInts(pts, i, hi); j > i {
				i = j - 1
				continue
			}
		}
		c.addPoint(p)
	}
	return dst
}

// allInts reports whether c's sum, min and max are integers.
func (c *Cell) allInts() bool {
	return c.Sum.Kind == series.Int && c.Min.Kind == series.Int && c.Max.Kind == series.Int
}

// addInts folds into c, an integer cell with a point, the integer points
// of pts from i on that lie before hi, up to the first one that would
// overflow the sum, and returns the index of the first point it left:
// addPoint's fast path, kept in registers for a row of integers.
func (c *Cell) addInts(pts []series.Point, i int, hi int64) int {
	sum, lo, up, n := int64(c.Sum.Bits), int64(c.Min.Bits), int64(c.Max.Bits), c.Count
	for ; i < len(pts); i++ {
		p := &pts[i]
		if p.T >= hi || p.Kind != series.Int {
			break
		}
		y := int64(p.Bits)
		s := sum + y
		if (s > sum) != (y > 0) {
			break
		}
		sum, n = s, n+1
		lo, up = min(lo, y), max(up, y)
	}
	c.Sum.Bits, c.Min.Bits, c.Max.Bits, c.Count = uint64(sum), uint64(lo), uint64(up), n
	return i
}

// addPoint folds one point into c: add, with a fast path for an integer
// point into an integer cell whose sum does not overflow.
func (c *Cell) addPoint(p *series.Point) {
	if c.Count > 0 && p.Kind == series.Int && c.Sum.Kind == series.Int && c.Min.Kind == series.Int && c.Max.Kind == series.Int {
		x, y := int64(c.Sum.Bits), int64(p.Bits)
		if s := x + y; (s > x) == (y > 0) {
			c.Count++
			c.Sum.Bits = uint64(s)
			if y < int64(c.Min.Bits) {
				c.Min.Bits = p.Bits
			}
			if y > int64(c.Max.Bits) {
				c.Max.Bits = p.Bits
			}
			return
		}
	}
	c.add(*p, *p, *p, 1)
}

// FoldCells appends to dst the cells of iv in the row starting at base
// folded from finer cells (sorted by T, each inside one interval of iv),
// the way a day cell is folded from its hours. A cell's first point is
// its first finer cell's when that one starts with it, else none.
func FoldCells(dst []Cell, iv *Interval, base int64, cells []Cell) []Cell {
	n := len(dst)
	cur := -1
	for i := range cells {
		c := &cells[i]
		if c.Count == 0 {
			continue
		}
		idx := iv.Index(base, floorDiv(c.T, 1000))
		if idx != cur || len(dst) == n {
			dst = append(dst, Cell{T: iv.CellStart(base, idx), Edge: EdgeNone})
			cur = idx
			if d := &dst[len(dst)-1]; c.T == d.T {
				d.Edge, d.First = c.Edge, c.First
			}
		}
		dst[len(dst)-1].add(c.Sum, c.Min, c.Max, c.Count)
	}
	return dst
}
