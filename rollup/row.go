package rollup

import (
	"slices"

	"github.com/tsd-db/tsd/internal/cell"
)

// RowReader decodes stored rollup rows in every form tsd reads: tsd's
// cell columns (FD ‖ index), the packed column (FD alone), and OpenTSDB's
// columns (3-byte or legacy "<agg>:" qualifiers) of the four aggregators
// IDs maps, a cell needing all of them unless Partial. A cell column or a packed cell
// wins over OpenTSDB columns of the same index (those written through
// /api/rollup into a dense store). The flusher reads rows back through it
// and queries read cells through it, so both see one rule. Reuse one per
// goroutine: its scratch space is kept between rows.
type RowReader struct {
	// IDs are the configuration's aggregator ids (Config.IDs).
	IDs AggIDs
	// Partial keeps the cells of OpenTSDB columns that lack some of the
	// aggregators IDs maps (an adopted OpenTSDB table holding only sum
	// cells, say), their Missing naming the absent ones, as OpenTSDB
	// reads the columns of the aggregator a query asks for; a cell whose
	// count is present must count points. Default false: such cells are
	// left out (the flusher folds only whole cells).
	Partial bool

	packed  RowDecoder
	parts   map[int]rowPart
	order   []int
	scratch []Cell
}

// rowPart is a cell being gathered from a row's columns.
type rowPart struct {
	c    Cell
	have uint8 // the aggregators seen, a bit per Agg
	tsd  bool  // from a cell column or the packed column: complete
}

// Decode appends the usable cells of the row at base (seconds) of iv to
// dst in index order, and returns how many columns did not decode (cell
// columns and packed values; an OpenTSDB column of another aggregator is
// not counted). A cell with no points, or lacking one of the aggregators
// IDs maps (unless Partial), is left out.
func (r *RowReader) Decode(dst []Cell, iv *Interval, base int64, cells []cell.Cell) ([]Cell, int) {
	if out, bad, ok := r.decodeTSD(dst, iv, base, cells); ok {
		return out, bad
	}
	if r.parts == nil {
		r.parts = map[int]rowPart{}
	}
	clear(r.parts)
	want := r.want()
	bad := 0
	for i := range cells {
		c := &cells[i]
		if idx, ok := ParseCellQualifier(c.Qualifier); ok {
			v, err := ParseCellValue(iv.CellStart(base, idx), c.Value)
			if err != nil {
				bad++
				continue
			}
			r.parts[idx] = rowPart{c: v, have: want, tsd: true}
			continue
		}
		if string(c.Qualifier) == PackedQualifier {
			var err error
			if r.scratch, err = r.packed.Decode(r.scratch[:0], iv, base, c.Value); err != nil {
				bad++
			}
			for _, pc := range r.scratch {
				r.parts[iv.Index(base, pc.T/1000)] = rowPart{c: pc, have: want, tsd: true}
			}
			continue
		}
		r.addColumn(iv, base, c)
	}
	return r.appendUsable(dst, want), bad
}

// decodeTSD is Decode's path for the rows tsd writes in its dense
// format: one packed column, or cell columns only (whose qualifiers sort
// by index). Their cells need no gathering, so they are appended in
// order; ok is false for any other row.
func (r *RowReader) decodeTSD(dst []Cell, iv *Interval, base int64, cells []cell.Cell) (out []Cell, bad int, ok bool) {
	if len(cells) == 1 && string(cells[0].Qualifier) == PackedQualifier {
		n := len(dst)
		out, err := r.packed.Decode(dst, iv, base, cells[0].Value)
		if err != nil {
			bad = 1
		}
		return keepCounted(out, n), bad, true
	}
	for i := range cells {
		if _, isCell := ParseCellQualifier(cells[i].Qualifier); !isCell {
			return dst, 0, false
		}
	}
	for i := range cells {
		idx, _ := ParseCellQualifier(cells[i].Qualifier)
		v, err := ParseCellValue(iv.CellStart(base, idx), cells[i].Value)
		if err != nil {
			bad++
			continue
		}
		if v.Count > 0 {
			dst = append(dst, v)
		}
	}
	return dst, bad, true
}

// keepCounted drops from dst[n:] the cells without points.
func keepCounted(dst []Cell, n int) []Cell {
	i := n
	for i < len(dst) && dst[i].Count > 0 {
		i++
	}
	if i == len(dst) {
		return dst // the usual case: nothing to drop, nothing to copy
	}
	out := dst[:i]
	for _, c := range dst[i:] {
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out
}

// want is the set of aggregators a cell needs.
func (r *RowReader) want() uint8 {
	var w uint8
	for a, id := range r.IDs {
		if id >= 0 {
			w |= 1 << a
		}
	}
	return w
}

// addColumn adds an OpenTSDB column to its cell, unless a cell column or
// packed cell holds that index.
func (r *RowReader) addColumn(iv *Interval, base int64, c *cell.Cell) {
	q, p, err := ParseColumn(iv, base, c.Qualifier, c.Value)
	if err != nil {
		return
	}
	for a, id := range r.IDs {
		// The legacy form names its aggregator instead of an id.
		if id < 0 || (q.AggID >= 0 && id != q.AggID) || (q.AggID < 0 && string(q.AggName) != aggNames[a]) {
			continue
		}
		e, ok := r.parts[q.Index]
		if e.tsd {
			return
		}
		if !ok {
			e.c = Cell{T: p.T}
		}
		switch Agg(a) {
		case Sum:
			e.c.Sum = p
		case Count:
			e.c.Count = p.Int()
		case Min:
			e.c.Min = p
		case Max:
			e.c.Max = p
		}
		e.have |= 1 << a
		r.parts[q.Index] = e
	}
}

// appendUsable appends the complete cells with points, by index, and
// with Partial the cells holding some aggregators (and points, when one
// is the count).
func (r *RowReader) appendUsable(dst []Cell, want uint8) []Cell {
	r.order = r.order[:0]
	for idx := range r.parts {
		r.order = append(r.order, idx)
	}
	slices.Sort(r.order)
	for _, idx := range r.order {
		e := r.parts[idx]
		switch {
		case e.have == want && e.c.Count > 0:
			dst = append(dst, e.c)
		case r.Partial && e.have != 0 && e.have != want && (e.have&(1<<Count) == 0 || e.c.Count > 0):
			e.c.Missing = want &^ e.have
			dst = append(dst, e.c)
		}
	}
	return dst
}
