package ingest

import "github.com/tsd-db/tsd/internal/series"

// AppendPoints appends to dst the points of the series with key that are
// still in the head (not yet flushed) with mint <= T < maxt, in time order,
// one per timestamp (the latest write wins), and returns dst. It sees every
// committed point. It does not allocate beyond growing dst.
func (h *Head) AppendPoints(dst []series.Point, key []byte, mint, maxt int64) []series.Point {
	s := h.series.get(key)
	if s == nil {
		return dst
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.rows {
		r := &s.rows[i]
		if r.base >= maxt {
			break
		}
		if r.base+RowSpan > mint {
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
