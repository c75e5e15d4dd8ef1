package read

import (
	"context"
	"slices"

	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/uid/index"
)

// HistCell is one stored histogram point of a series: its time and the
// cell's value (codec id first), which the HistFunc owns.
type HistCell struct {
	T     int64
	Value []byte
}

// HistFunc receives one series' histogram points in the range, in time
// order (one per timestamp), on the caller's goroutine.
type HistFunc func(s index.Series, cells []HistCell) error

// Histograms reads the histogram cells of the selected series in
// [sel.Start, sel.End] (OpenTSDB 2.4's 06-prefixed columns, stored
// beside the points), one Get per hour row the index gives each series,
// series by series. The head holds no histograms (the writer stores
// them at once), so the store alone answers. Each cell is charged to
// the budget as many points as its bytes would fill (at least one), so
// a query's memory stays within the budget's bytes. Series with no
// histogram in the range are not given to fn.
func (r *Reader) Histograms(ctx context.Context, sel Selection, fn HistFunc) error {
	if ok, err := r.begin(ctx, &sel); !ok || err != nil {
		return err
	}
	rr := r.getRowReader()
	defer r.putRowReader(rr)
	var cells []HistCell
	for i := range sel.Series {
		s := &sel.Series[i]
		span := spanOf(s)
		first, last := hourRange(&span, sel.Start, sel.End)
		cells = cells[:0]
		for base := first; base <= last; base += hourMs {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			found, err := rr.getCells(ctx, []byte(s.TSUID), base)
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			if cells, err = r.histCells(cells, rr, base, &sel); err != nil {
				return err
			}
		}
		if len(cells) == 0 {
			continue
		}
		slices.SortStableFunc(cells, func(a, b HistCell) int { return cmpInt(a.T, b.T) })
		cells = dedupLast(cells)
		if err := fn(*s, cells); err != nil {
			return err
		}
		cells = nil // fn owns them
	}
	return nil
}

// histCells appends the histogram cells of the row in rr within sel's
// range, charging them to its budget.
func (r *Reader) histCells(dst []HistCell, rr *rowReader, base int64, sel *Selection) ([]HistCell, error) {
	r.c.rows.Add(1)
	for j := range rr.cells {
		c := &rr.cells[j]
		if !hist.IsQualifier(c.Qualifier) {
			continue
		}
		off, _, err := hist.ParseQualifier(c.Qualifier)
		if err != nil {
			r.corrupt(rr.key, err)
			continue
		}
		t := base + off
		if t < sel.Start || t > sel.End {
			continue
		}
		if err := sel.Budget.AddPoints(1 + len(c.Value)/PointBytes); err != nil {
			return dst, err
		}
		dst = append(dst, HistCell{T: t, Value: slices.Clone(c.Value)})
	}
	return dst, nil
}

// dedupLast keeps the last of cells sharing a timestamp (a seconds and a
// milliseconds qualifier for one instant): the one sorted after.
func dedupLast(cells []HistCell) []HistCell {
	out := cells[:0]
	for i, c := range cells {
		if i+1 < len(cells) && cells[i+1].T == c.T {
			continue
		}
		out = append(out, c)
	}
	return out
}
