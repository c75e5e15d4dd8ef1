package harness

import (
	"fmt"
	"runtime"
	"slices"
)

// Measure does one run of one side of a figure and returns its number.
type Measure func(e *Env) (float64, error)

// Side is tsd's or the peer's half of a figure.
type Side struct {
	// Name says what was measured, e.g. "raw Pebble, Sync".
	Name string
	// Measure is nil when this side cannot be measured yet.
	Measure Measure
	// Missing is printed instead of a number when Measure is nil, e.g.
	// "n/a (issue 6)".
	Missing string
}

// Figure is one row of the table.
type Figure struct {
	// Name is the row's label, unit included.
	Name string
	// Unit is the unit of both sides' numbers ("cells/s", "ns", "B/sample").
	Unit string
	// LowerIsBetter orients the ratio's reading.
	LowerIsBetter bool
	// Once marks deterministic figures (sizes): one run is enough.
	Once bool
	// TSD and Peer are the two sides.
	TSD, Peer Side
}

// Result holds a figure's runs.
type Result struct {
	Figure    *Figure
	TSD, Peer []float64
	// TSDErr and PeerErr are the first error of each side.
	TSDErr, PeerErr error
}

// Run measures every figure and returns the results in order. A failing
// side is reported in its Result, and the other rows still run.
func Run(e *Env, figs []Figure) []Result {
	rs := make([]Result, len(figs))
	for i := range figs {
		rs[i] = runFigure(e, &figs[i])
	}
	return rs
}

func runFigure(e *Env, f *Figure) Result {
	r := Result{Figure: f}
	runs := e.Size.Runs
	if f.Once {
		runs = 1
	}
	for i := 0; i < runs; i++ {
		// Alternate which side goes first so drift hits both alike.
		if i%2 == 0 {
			r.TSD, r.TSDErr = measure(e, f, "tsd", f.TSD, r.TSD, r.TSDErr)
			r.Peer, r.PeerErr = measure(e, f, "peer", f.Peer, r.Peer, r.PeerErr)
		} else {
			r.Peer, r.PeerErr = measure(e, f, "peer", f.Peer, r.Peer, r.PeerErr)
			r.TSD, r.TSDErr = measure(e, f, "tsd", f.TSD, r.TSD, r.TSDErr)
		}
	}
	return r
}

func measure(e *Env, f *Figure, who string, s Side, vs []float64, err error) ([]float64, error) {
	if s.Measure == nil || err != nil {
		return vs, err
	}
	runtime.GC() // start every run from a collected heap
	v, err := s.Measure(e)
	if err != nil {
		e.Logf("%s: %s: %v", f.Name, who, err)
		return vs, fmt.Errorf("%s: %w", s.Name, err)
	}
	e.Logf("%s: %s run %d: %s %s", f.Name, who, len(vs)+1, formatValue(v), f.Unit)
	return append(vs, v), nil
}

// Median returns the median of vs (the mean of the middle two when even),
// or 0 for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
