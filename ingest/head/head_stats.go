package head

import "math"

// TimeStats describes what the head holds in time: Rows counts its open
// hour rows (one per series and hour: the head's chunks), MinTime and
// MaxTime are its oldest and newest point times in ms. An empty head
// answers math.MaxInt64 and math.MinInt64, as Prometheus's empty head
// does.
type TimeStats struct {
	Rows             int
	MinTime, MaxTime int64
}

// TimeStats walks the hour index and decodes the rows of its oldest and
// newest hours: a status figure, not for hot paths.
func (h *Head) TimeStats() TimeStats {
	st := TimeStats{MinTime: math.MaxInt64, MaxTime: math.MinInt64}
	var oldest, newest []*memSeries
	var lo, hi int64
	for i := range h.hours.shards {
		sh := &h.hours.shards[i]
		sh.mu.Lock()
		for base, ss := range sh.m {
			st.Rows += len(ss)
			if len(ss) == 0 {
				continue
			}
			if oldest == nil || base < lo {
				lo, oldest = base, nil
			}
			if base == lo {
				oldest = append(oldest, ss...)
			}
			if newest == nil || base > hi {
				hi, newest = base, nil
			}
			if base == hi {
				newest = append(newest, ss...)
			}
		}
		sh.mu.Unlock()
	}
	for _, s := range oldest {
		if pts, _, ok := h.AppendRowPoints(nil, []byte(s.key), lo); ok && len(pts) > 0 {
			st.MinTime = min(st.MinTime, pts[0].T)
		}
	}
	for _, s := range newest {
		if pts, _, ok := h.AppendRowPoints(nil, []byte(s.key), hi); ok && len(pts) > 0 {
			st.MaxTime = max(st.MaxTime, pts[len(pts)-1].T)
		}
	}
	return st
}
