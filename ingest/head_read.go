package ingest

import "github.com/tsd-db/tsd/internal/series"

// AppendPoints appends to dst the points of the series with key that are
// still in the head (not yet flushed, or being written) with mint <= T <
// maxt, in time order, one per timestamp (the latest write wins), and
// returns dst. It sees every committed point. It does not allocate beyond
// growing dst.
//
// A reader that also reads the store must read the head first: a row
// leaves the head only after its write to the store, so a point is then
// seen in one or the other (possibly both, with equal values).
func (h *Head) AppendPoints(dst []series.Point, key []byte, mint, maxt int64) []series.Point {
	s := h.series.get(key)
	if s == nil {
		return dst
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendPoints(dst, mint, maxt)
}

// appendPoints merges the flushing rows (older writes) and the open rows.
// The caller holds s.mu.
func (s *memSeries) appendPoints(dst []series.Point, mint, maxt int64) []series.Point {
	rows, fl := s.rows, s.flushing
	for len(rows) > 0 || len(fl) > 0 {
		var r, older *openRow
		switch {
		case len(fl) == 0 || (len(rows) > 0 && rows[0].base < fl[0].base):
			r, rows = &rows[0], rows[1:]
		case len(rows) == 0 || fl[0].base < rows[0].base:
			r, fl = &fl[0], fl[1:]
		default:
			r, older, rows, fl = &rows[0], &fl[0], rows[1:], fl[1:]
		}
		if r.base >= maxt {
			break
		}
		if r.base+RowSpan <= mint {
			continue
		}
		if older != nil {
			dst = mergeRows(dst, older, r, mint, maxt)
		} else {
			dst = r.appendPoints(dst, mint, maxt)
		}
	}
	return dst
}

// Iterator returns the points AppendPoints would append, as an iterator
// over a snapshot: later commits do not change it.
func (h *Head) Iterator(key []byte, mint, maxt int64) series.Iterator {
	return series.NewSliceIterator(nil, h.AppendPoints(nil, key, mint, maxt))
}
