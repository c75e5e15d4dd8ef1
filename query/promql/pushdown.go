package promql

import (
	"context"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// pushdownKey marks a context whose query may have range functions pushed
// down into Select.
type pushdownKey struct{}

// WithPushdown returns ctx marked so that the Queryable's Selects under it
// may evaluate range functions themselves (see the package doc, Pushdown),
// when the query n (an expression or the engine's statement,
// prom.Query.Statement) allows it: no subquery and no anchored or smoothed
// selector anywhere in it. Otherwise, or for a nil n, it returns ctx.
// Mark the context given to the query's Exec, never one shared by other
// queries.
func WithPushdown(ctx context.Context, n parser.Node) context.Context {
	if n == nil || !pushdownSafe(n) {
		return ctx
	}
	return context.WithValue(ctx, pushdownKey{}, true)
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
// instant query, step 0, or an @ selector).
func pushdownOf(ctx context.Context, h *storage.SelectHints) *pushdown {
	pd, ok := pushdownPlan(ctx, h)
	if !ok {
		return nil
	}
	return &pd
}

// pushdownPlan is pushdownOf by value, for Select to keep the plan in
// its own allocation.
func pushdownPlan(ctx context.Context, h *storage.SelectHints) (pushdown, bool) {
	if h == nil || h.Range <= 0 || !PushdownMarked(ctx) {
		return pushdown{}, false
	}
	fn := rangeFuncs[h.Func]
	if fn == fnNone {
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
