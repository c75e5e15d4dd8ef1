package promql

import (
	"context"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// pushdownKey marks a context whose query may have range functions pushed
// down into Select.
type pushdownKey struct{}

// WithPushdown returns ctx marked so that the Queryable's Selects under it
// may evaluate range functions themselves (see the package doc, Pushdown),
// when the query n (the engine's statement, prom.Query.Statement, or an
// expression) allows it: no subquery and no anchored or smoothed selector
// anywhere in it. Otherwise, or for a nil n, it returns ctx.
//
// When q, the Queryable the query runs on, is tsd's, WithPushdown also
// rewrites n in place so that count_over_time can be pushed down too:
// each count_over_time(v[R]) becomes sum_over_time(v[R]) with a marker
// matcher (countMarker) appended to v's matchers, and the Select of that
// selector reads its series in count mode, every sample's value 1
// (staleness markers kept): the sum of those ones over a window is the
// count, whether the engine sums raw samples or Select sums them itself
// or from rollup cells. The engine looks the function up by name at
// Exec (hints' Func, FunctionCalls) and drops the metric name of both
// alike, so n must be the very statement the query will Exec, rewritten
// before Exec; any other q (Prometheus's tsdb behind the HTTP API in
// tests) gets n unchanged, since only tsd's Select knows the marker.
//
// When n is the statement (*parser.EvalStmt), WithPushdown then also
// replaces each avg_over_time, min_over_time, max_over_time,
// sum_over_time and last_over_time call whose every window Select will
// push down by the call's selector, marked with its window
// (rewriteWindows): the engine looks up one sample per step instead of
// calling the function over a window of one sample. Not with
// Options.DisablePushdown or Options.DelayedNameRemoval.
// Calling it again on n changes nothing more.
// Mark the context given to the query's Exec, never one shared by other
// queries.
func WithPushdown(ctx context.Context, q storage.Queryable, n parser.Node) context.Context {
	if n == nil || !pushdownSafe(n) {
		return ctx
	}
	if tq, ok := q.(*Queryable); ok {
		rewriteCounts(n)
		if st, ok := n.(*parser.EvalStmt); ok && !tq.opts.DisablePushdown && !tq.opts.DelayedNameRemoval {
			rewriteWindows(st)
		}
	}
	return context.WithValue(ctx, pushdownKey{}, true)
}

// countMarker is the matcher rewriteCounts appends to a count_over_time's
// selector. Select knows it by its address, which no parsed query holds,
// so a query that writes the same matcher ({__tsd_count__=""}) keeps its
// ordinary meaning: a label no series has, which = "" matches. For the
// same reason the marker, were it ever not stripped, would select the
// same series.
var countMarker = &labels.Matcher{Type: labels.MatchEqual, Name: "__tsd_count__", Value: ""}

// sumOverTime is the function a count_over_time becomes.
var sumOverTime = parser.Functions["sum_over_time"]

// rewriteCounts turns every count_over_time over a matrix selector of n
// into a sum_over_time over the same selector in count mode (WithPushdown).
func rewriteCounts(n parser.Node) {
	parser.Inspect(n, func(node parser.Node, _ []parser.Node) error {
		c, ok := node.(*parser.Call)
		if !ok || c.Func == nil || c.Func.Name != "count_over_time" || len(c.Args) != 1 {
			return nil
		}
		ms, ok := unwrapArg(c.Args[0]).(*parser.MatrixSelector)
		if !ok {
			return nil
		}
		vs, ok := ms.VectorSelector.(*parser.VectorSelector)
		if !ok || vs.Anchored || vs.Smoothed {
			return nil
		}
		c.Func = sumOverTime
		// A new backing array: the parser's may be shared.
		vs.LabelMatchers = append(vs.LabelMatchers[:len(vs.LabelMatchers):len(vs.LabelMatchers)], countMarker)
		return nil
	})
}

// unwrapArg returns a function's argument without the parentheses and
// step-invariant wrapper around it (PreprocessExpr removes an argument's
// parentheses and wraps the call rather than a matrix selector, but an
// expression not preprocessed may hold them).
func unwrapArg(e parser.Expr) parser.Expr {
	for {
		switch x := e.(type) {
		case *parser.ParenExpr:
			e = x.Expr
		case *parser.StepInvariantExpr:
			e = x.Expr
		default:
			return e
		}
	}
}

// countMode returns ms without countMarker, and whether it held it.
func countMode(ms []*labels.Matcher) ([]*labels.Matcher, bool) {
	for i, m := range ms {
		if m == countMarker {
			return withoutMatchers(ms, i, 1), true
		}
	}
	return ms, false
}

// withoutMatchers returns ms without its n matchers from i: ms itself cut
// short when they end it (where the rewrites append their markers), else
// a copy, the engine's slice left as it is.
func withoutMatchers(ms []*labels.Matcher, i, n int) []*labels.Matcher {
	if i+n == len(ms) {
		return ms[:i]
	}
	out := make([]*labels.Matcher, 0, len(ms)-n)
	return append(append(out, ms[:i]...), ms[i+n:]...)
}

// pushdownSafe reports whether every matrix selector of n is evaluated by
// the engine over windows the hints describe: a subquery's selectors get
// the outer query's step in their hints, and anchored and smoothed
// selectors read beyond the hinted range.
func pushdownSafe(n parser.Node) bool {
	safe := true
	parser.Inspect(n, func(node parser.Node, _ []parser.Node) error {
		switch x := node.(type) {
		case *parser.SubqueryExpr:
			safe = false
		case *parser.VectorSelector:
			if x.Anchored || x.Smoothed {
				safe = false
			}
		}
		return nil
	})
	return safe
}

// PushdownMarked reports whether ctx was marked by WithPushdown.
func PushdownMarked(ctx context.Context) bool {
	ok, _ := ctx.Value(pushdownKey{}).(bool)
	return ok
}

// rangeFunc is a range function Select can evaluate: one whose result
// over a single sample is that sample's value (present_over_time: any
// value), so that the engine, given one sample per window holding the
// window's result, returns that result.
type rangeFunc uint8

const (
	fnNone rangeFunc = iota
	fnAvg
	fnMin
	fnMax
	fnSum
	fnLast
	fnPresent
	fnCount // sum_over_time in count mode: count_over_time (rewriteCounts)
)

var rangeFuncs = map[string]rangeFunc{
	"avg_over_time": fnAvg, "min_over_time": fnMin, "max_over_time": fnMax,
	"sum_over_time": fnSum, "last_over_time": fnLast, "present_over_time": fnPresent,
}

// pushdown is the evaluation plan of one Select: the window ends first,
// first+step, ... up to last, each window (end-rng, end].
type pushdown struct {
	fn                rangeFunc
	first, last, step int64 // step 0: one window
	rng               int64
}

// pushdownOf returns the plan of a Select, or nil when the engine must get
// the raw samples. The engine evaluates a matrix selector of range R at
// the query's steps: windows (t-R, t] for t = start-offset, then every
// step; its hints hold Start = start-offset-R+1, End = end-offset, Step
// and Range. One sample per window at its end is the same answer only if
// no window holds another window's end: step >= R, or a single window (an
// instant query, step 0, or an @ selector). count says the Select is in
// count mode (countMode).
func pushdownOf(ctx context.Context, h *storage.SelectHints, count bool) *pushdown {
	pd, ok := pushdownPlan(ctx, h, count)
	if !ok {
		return nil
	}
	return &pd
}

// pushdownPlan is pushdownOf by value, for Select to keep the plan in
// its own allocation. In count mode only sum_over_time, the function
// rewriteCounts leaves, is pushed down: as a count.
func pushdownPlan(ctx context.Context, h *storage.SelectHints, count bool) (pushdown, bool) {
	if !PushdownMarked(ctx) {
		return pushdown{}, false
	}
	return planOf(h, count)
}

// planOf is pushdownPlan for hints whose context allows pushdown.
func planOf(h *storage.SelectHints, count bool) (pushdown, bool) {
	if h == nil || h.Range <= 0 {
		return pushdown{}, false
	}
	fn := rangeFuncs[h.Func]
	switch {
	case count && fn == fnSum:
		fn = fnCount
	case count || fn == fnNone:
		return pushdown{}, false
	}
	first := h.Start + h.Range - 1
	switch {
	case first > h.End:
		return pushdown{}, false
	case h.Step <= 0 || first+h.Step > h.End:
		if h.Step <= 0 && first != h.End {
			return pushdown{}, false
		}
		return pushdown{fn: fn, first: first, last: first, rng: h.Range}, true
	case h.Step < h.Range:
		return pushdown{}, false
	}
	last := first + (h.End-first)/h.Step*h.Step
	return pushdown{fn: fn, first: first, last: last, step: h.Step, rng: h.Range}, true
}
