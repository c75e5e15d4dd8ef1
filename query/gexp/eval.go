package gexp

import (
	"fmt"
	"math"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// function is one of OpenTSDB's Expression classes: it maps the
// materialised series parameters (one slice per parameter) and the bare
// arguments to result series.
type function func(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error)

// functions are the names ExpressionFactory registers that tsd builds.
var functions = map[string]function{
	"scale":          scale,
	"absolute":       absolute,
	"alias":          alias,
	"timeShift":      timeShift,
	"shift":          timeShift,
	"highestMax":     highestMax,
	"highestCurrent": highestCurrent,
	"movingAverage":  movingAverage,
}

// Evaluate runs t over results, the groups of each sub-query of the
// deduplicated query in order (ExpressionTree.evaluate); ids resolves the
// names the set functions order by, and sub0 is the request's first
// sub-query.
func (t *Tree) Evaluate(results [][]opentsdb.Group, ids IDs, sub0 *tsquery.SubQuery) ([]opentsdb.Group, error) {
	return t.evaluate(results, &env{ids: ids, sub0: sub0})
}

func (t *Tree) evaluate(results [][]opentsdb.Group, ev *env) ([]opentsdb.Group, error) {
	if t.gap {
		return nil, &tsquery.Error{Msg: "Unknown parameter type: null in tree: " + t.Name}
	}
	in := make([][]opentsdb.Group, 0, len(t.params))
	for _, p := range t.params {
		if p.sub != nil {
			r, err := p.sub.evaluate(results, ev)
			if err != nil {
				return nil, err
			}
			in = append(in, r)
			continue
		}
		if p.metric >= len(results) {
			return nil, &tsquery.Error{Msg: fmt.Sprintf("Index: %d, Size: %d", p.metric, len(results))}
		}
		in = append(in, results[p.metric])
	}
	if t.op != opNone {
		return combine(ev, t.op, in)
	}
	return t.fn(in, t.args)
}

func bad(msg string) error { return &tsquery.Error{Msg: msg} }

// each maps every group of every parameter through f, in order.
func each(in [][]opentsdb.Group, f func(g opentsdb.Group) opentsdb.Group) []opentsdb.Group {
	var out []opentsdb.Group
	for _, gs := range in {
		for _, g := range gs {
			out = append(out, f(g))
		}
	}
	if out == nil {
		out = []opentsdb.Group{}
	}
	return out
}

// mapPoints returns g with its points mapped through f into a new slice.
func mapPoints(g opentsdb.Group, f func(series.Point) series.Point) opentsdb.Group {
	pts := make([]series.Point, len(g.Points))
	for i, p := range g.Points {
		pts[i] = f(p)
	}
	g.Points = pts
	return g
}

// abs is Math.abs on the point's own type: Long.MIN_VALUE stays itself.
func abs(p series.Point) series.Point {
	if p.IsInt() {
		v := p.Int()
		if v < 0 {
			v = -v
		}
		return series.IntPoint(p.T, v)
	}
	return series.Float64Point(p.T, math.Abs(p.Float()))
}
