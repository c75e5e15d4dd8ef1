package promql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/schema"
	"github.com/prometheus/prometheus/storage"
)

// windowMarker is the matcher rewriteWindows puts before a window
// selector's spec (windowSpec): Select knows it by its address, which no
// parsed query holds, as countMarker. The spec matcher right after it is
// an ordinary allocation, read only because of where it sits.
var windowMarker = &labels.Matcher{Type: labels.MatchEqual, Name: "__tsd_window__", Value: ""}

// vectorFuncs are the range functions rewriteWindows turns into their
// selector: those whose pushed-down sample is the function's value
// (present_over_time's is any value, so it stays a call).
var vectorFuncs = map[string]bool{
	"avg_over_time": true, "min_over_time": true, "max_over_time": true,
	"sum_over_time": true, "last_over_time": true,
}

// windowSpec is what a window selector's Select needs to rebuild the
// matrix selector's hints: the function, its range and the statement's
// lookback delta (the engine hints a vector selector from start-lookback+1
// instead of start-R+1).
type windowSpec struct {
	fn       string
	rng      int64 // ms
	lookback int64 // ms
}

func (w windowSpec) String() string {
	return w.fn + " " + strconv.FormatInt(w.rng, 10) + " " + strconv.FormatInt(w.lookback, 10)
}

// parseWindowSpec reads windowSpec.String.
func parseWindowSpec(s string) (windowSpec, error) {
	f := strings.Fields(s)
	if len(f) != 3 || !vectorFuncs[f[0]] {
		return windowSpec{}, fmt.Errorf("promql: bad window spec %q", s)
	}
	rng, err1 := strconv.ParseInt(f[1], 10, 64)
	lb, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || rng <= 0 || lb <= 0 {
		return windowSpec{}, fmt.Errorf("promql: bad window spec %q", s)
	}
	return windowSpec{fn: f[0], rng: rng, lookback: lb}, nil
}

// rewriteWindows replaces, in st, each call fn(v[R]) of a vectorFuncs
// function whose windows Select will push down whatever the data (see
// windowsPushable) by v itself, marked with its window (windowMarker and
// the spec). The engine then evaluates an instant selector: one look-up
// of the sample at each step, where the call walked a buffered iterator
// over each window and called the function on its one sample, about a
// third of the engine's time for an hourly range query over a month.
//
// The answers are the same: Select returns one sample per non-empty
// window at its end (the window's value) and, but for last_over_time,
// series without the metric name and metadata labels, as the call's
// result would be named; the selector finds the sample at each step's
// end and no other: where steps are closer than the lookback delta, a
// staleness marker ends each empty window that an earlier window's
// sample would otherwise fill (staleFill). Only selectors with a metric
// name matcher are rewritten: dropping the name cannot then make two
// series one label set, which the call would refuse.
func rewriteWindows(st *parser.EvalStmt) {
	st.Expr = rewriteWindowsIn(st.Expr, st)
}

func rewriteWindowsIn(e parser.Expr, st *parser.EvalStmt) parser.Expr {
	switch x := e.(type) {
	case *parser.AggregateExpr:
		x.Expr = rewriteWindowsIn(x.Expr, st)
		if x.Param != nil {
			x.Param = rewriteWindowsIn(x.Param, st)
		}
	case *parser.BinaryExpr:
		x.LHS, x.RHS = rewriteWindowsIn(x.LHS, st), rewriteWindowsIn(x.RHS, st)
	case *parser.ParenExpr:
		x.Expr = rewriteWindowsIn(x.Expr, st)
	case *parser.UnaryExpr:
		x.Expr = rewriteWindowsIn(x.Expr, st)
	case *parser.StepInvariantExpr:
		x.Expr = rewriteWindowsIn(x.Expr, st)
	case *parser.Call:
		if vs := windowSelector(x, st); vs != nil {
			return vs
		}
		if writesName(x) {
			break
		}
		for i, a := range x.Args {
			x.Args[i] = rewriteWindowsIn(a, st)
		}
	}
	return e
}

// writesName reports whether c is a label_replace or label_join that
// writes the metric name, as KeepGroupedNames's does. Under delayed name
// removal such a call reads names that a window selector's series lack,
// and keeps the one it writes to the end; under the engine's default a
// function has dropped them anyway, so reading the call's argument
// unrewritten changes no answer.
func writesName(c *parser.Call) bool {
	if c.Func == nil || (c.Func.Name != "label_replace" && c.Func.Name != "label_join") || len(c.Args) < 2 {
		return false
	}
	dst, ok := c.Args[1].(*parser.StringLiteral)
	return ok && dst.Val == labels.MetricName
}

// windowSelector returns c's selector marked with its window, or nil when
// c is not to be rewritten.
func windowSelector(c *parser.Call, st *parser.EvalStmt) *parser.VectorSelector {
	if c.Func == nil || !vectorFuncs[c.Func.Name] || len(c.Args) != 1 {
		return nil
	}
	ms, ok := unwrapArg(c.Args[0]).(*parser.MatrixSelector)
	if !ok {
		return nil
	}
	vs, ok := ms.VectorSelector.(*parser.VectorSelector)
	if !ok || vs.Anchored || vs.Smoothed || !namesMetric(vs.LabelMatchers) || !windowsPushable(st, ms.Range) {
		return nil
	}
	spec := windowSpec{fn: c.Func.Name, rng: ms.Range.Milliseconds(), lookback: st.LookbackDelta.Milliseconds()}
	// A new backing array: the parser's may be shared.
	n := len(vs.LabelMatchers)
	vs.LabelMatchers = append(vs.LabelMatchers[:n:n], windowMarker,
		&labels.Matcher{Type: labels.MatchEqual, Name: windowMarker.Name, Value: spec.String()})
	return vs
}

// windowsPushable reports whether every Select of a selector of range rng
// in st gets a pushdown plan (pushdownPlan): an instant query (one
// window; so is an @ selector's in any query), or a step of at least the
// range.
func windowsPushable(st *parser.EvalStmt, rng time.Duration) bool {
	if rng <= 0 || st.LookbackDelta <= 0 || st.Start.After(st.End) {
		return false
	}
	if st.Interval == 0 {
		return st.Start.Equal(st.End)
	}
	return st.Interval >= rng
}

// namesMetric reports whether ms hold an equality matcher on the metric
// name.
func namesMetric(ms []*labels.Matcher) bool {
	for _, m := range ms {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return true
		}
	}
	return false
}

// windowMode returns ms without the window marker and its spec, and the
// spec when they held it.
func windowMode(ms []*labels.Matcher) ([]*labels.Matcher, windowSpec, bool, error) {
	for i, m := range ms {
		if m != windowMarker {
			continue
		}
		if i+1 >= len(ms) {
			return ms, windowSpec{}, false, fmt.Errorf("promql: window marker without its spec")
		}
		spec, err := parseWindowSpec(ms[i+1].Value)
		if err != nil {
			return ms, windowSpec{}, false, err
		}
		return withoutMatchers(ms, i, 2), spec, true, nil
	}
	return ms, windowSpec{}, false, nil
}

// matrixHints returns the hints the engine gives the matrix selector a
// window selector (hinted as an instant one: from start-lookback+1)
// replaced.
func (w windowSpec) matrixHints(h *storage.SelectHints) *storage.SelectHints {
	m := *h
	m.Start = h.Start + w.lookback - w.rng
	m.Range, m.Func = w.rng, w.fn
	return &m
}

// windowLabels names a window selector's series as the call it replaced
// names its result: without the metric name and metadata labels, but for
// last_over_time.
func (w windowSpec) windowLabels(ss []*tsdSeries) {
	if w.fn == "last_over_time" {
		return
	}
	for _, s := range ss {
		s.lbls = s.lbls.DropReserved(schema.IsMetadataLabel)
	}
}
