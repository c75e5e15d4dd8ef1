package promql

import (
	"testing"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/series"
)

// TestCombineCount: a count from cells is their counts less the point
// leaving and plus the point entering; a cell lacking its count (an
// OpenTSDB row with some aggregator columns only) reads the window raw,
// one lacking only what a count does not need does not.
func TestCombineCount(t *testing.T) {
	cells := func(missing uint8) []rollup.Cell {
		return []rollup.Cell{{T: 0, Count: 3, Missing: missing}, {T: 1000, Count: 2, Missing: missing}}
	}
	ps, pe := series.IntPoint(0, 7), series.IntPoint(2000, 1)
	for _, c := range []struct {
		cells      []rollup.Cell
		hasS, hasE bool
		v          float64
		ok, raw    bool
	}{
		{cells(0), false, false, 5, true, false},
		{cells(0), true, true, 5, true, false},
		{cells(0), true, false, 4, true, false},
		{cells(1 << rollup.Sum), false, true, 6, true, false},
		{cells(1<<rollup.Min | 1<<rollup.Max), false, false, 5, true, false},
		{cells(1 << rollup.Count), false, false, 0, false, true},
		{[]rollup.Cell{{T: 0, Count: 1}}, true, false, 0, false, false}, // only the point leaving
		{nil, false, true, 1, true, false},                              // only the point entering
	} {
		v, ok, raw := combine(fnCount, c.cells, ps, c.hasS, pe, c.hasE)
		if v != c.v || ok != c.ok || raw != c.raw {
			t.Errorf("%+v, start %v, end %v: %v %v %v, want %v %v %v", c.cells, c.hasS, c.hasE, v, ok, raw, c.v, c.ok, c.raw)
		}
	}
}
