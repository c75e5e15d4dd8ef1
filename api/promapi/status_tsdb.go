package promapi

import (
	"cmp"
	"slices"
)

// LabelCounts counts series by label pair: name → value → series. The
// zero value is not ready; make one with make(LabelCounts).
type LabelCounts map[string]map[string]uint64

// Add counts one series holding the label name=value.
func (c LabelCounts) Add(name, value string) {
	m := c[name]
	if m == nil {
		m = map[string]uint64{}
		c[name] = m
	}
	m[value]++
}

// Fill sets st's four lists, each the limit largest, and NumLabelPairs, as
// Prometheus's MemPostings.Stats computes them for /api/v1/status/tsdb:
// series by value of __name__, distinct values by label name, bytes by
// label name (each pair's encoded size, a length byte or four before the
// name and the value as the stringlabels build writes them, times its
// series) and series by name=value pair. Prometheus leaves ties in map
// order; tsd orders them by name, so equal data answers the same bytes.
func (c LabelCounts) Fill(st *TSDBStatus, limit int) {
	var metrics, names, bytes, pairs []TSDBStat
	st.NumLabelPairs = 0
	for name, values := range c {
		names = append(names, TSDBStat{Name: name, Value: uint64(len(values))})
		st.NumLabelPairs += len(values)
		var size uint64
		for value, n := range values {
			if name == "__name__" {
				metrics = append(metrics, TSDBStat{Name: value, Value: n})
			}
			pairs = append(pairs, TSDBStat{Name: name + "=" + value, Value: n})
			size += uint64(encodedLen(name)+encodedLen(value)) * n
		}
		bytes = append(bytes, TSDBStat{Name: name, Value: size})
	}
	st.SeriesCountByMetricName = top(metrics, limit)
	st.LabelValueCountByLabelName = top(names, limit)
	st.MemoryInBytesByLabelName = top(bytes, limit)
	st.SeriesCountByLabelValuePair = top(pairs, limit)
}

// encodedLen is a string's size in a stringlabels label set: its bytes
// and its length, one byte below 255, else four.
func encodedLen(s string) int {
	if len(s) < 255 {
		return len(s) + 1
	}
	return len(s) + 4
}

// top sorts l by value, largest first, ties by name, and keeps limit.
func top(l []TSDBStat, limit int) []TSDBStat {
	slices.SortFunc(l, func(a, b TSDBStat) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(l) > limit {
		l = l[:limit]
	}
	return l
}
