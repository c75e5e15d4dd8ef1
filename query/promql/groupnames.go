package promql

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// Grouping by names a function dropped (see the package doc, Names kept
// by grouping): max by (__name__) (max_over_time({__name__=~"a|b"}[1h]))
// is how TSBS asks VictoriaMetrics for each metric's hourly maximum.
// Prometheus's engine refuses it when two of the selected series differ
// only by their names: max_over_time drops the names first, and the two
// become one label set ("vector cannot contain metrics with the same
// labelset"); with delayed name removal too, which drops them at the end.
// NameCollision finds such a query before it runs, and KeepGroupedNames
// writes it so that an engine with delayed name removal keeps the names
// it groups by, as VictoriaMetrics answers it.

// groupsByName reports whether a keeps the metric name among the labels
// it groups by: by (…, __name__, …), or without (…) not naming it.
func groupsByName(a *parser.AggregateExpr) bool {
	return slices.Contains(a.Grouping, labels.MetricName) != a.Without
}

// collisionSelectors returns the selectors under e's aggregations by name
// whose series may collide once a function drops their names: those
// without an equality matcher on the name, under an aggregation of more
// than a bare selector (count by (__name__) ({__name__=~".+"}), a
// cardinality panel's query, keeps every name and would select every
// series twice).
func collisionSelectors(e parser.Expr) []*parser.VectorSelector {
	var vss []*parser.VectorSelector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		a, ok := n.(*parser.AggregateExpr)
		if !ok || !groupsByName(a) {
			return nil
		}
		if _, bare := unwrapArg(a.Expr).(*parser.VectorSelector); bare {
			return nil
		}
		parser.Inspect(a.Expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok && !namesMetric(vs.LabelMatchers) && !slices.Contains(vss, vs) {
				vss = append(vss, vs)
			}
			return nil
		})
		return nil
	})
	return vss
}

// NameCollision reports whether st holds an aggregation by the metric
// name over a selector that selects, over st's span, two series whose
// label sets differ only by their names: the query Prometheus's engine
// refuses once a function between the two drops the names. Without such
// an aggregation it reads nothing. An error is one of q's.
func NameCollision(ctx context.Context, q storage.Queryable, st *parser.EvalStmt) (bool, error) {
	vss := collisionSelectors(st.Expr)
	if len(vss) == 0 {
		return false, nil
	}
	mint, maxt := prom.FindMinMaxTime(st)
	qr, err := q.Querier(mint, maxt)
	if err != nil {
		return false, fmt.Errorf("promql: name collision: %w", err)
	}
	defer qr.Close()
	hints := &storage.SelectHints{Start: mint, End: maxt, Func: "series"}
	for _, vs := range vss {
		hit, err := collides(qr.Select(ctx, false, hints, vs.LabelMatchers...))
		if hit || err != nil {
			return hit, err
		}
	}
	return false, nil
}

// metadataLabels are the labels beside the name that the engine drops
// with it (schema.IsMetadataLabel), sorted as HashWithoutLabels wants.
var metadataLabels = []string{"__type__", "__unit__"}

// collides reports whether two of set's series differ only by their
// metric names.
func collides(set storage.SeriesSet) (bool, error) {
	names := map[uint64]string{}
	var buf []byte
	for set.Next() {
		l := set.At().Labels()
		var h uint64
		h, buf = l.HashWithoutLabels(buf, metadataLabels...) // nor the name, ever
		name := l.Get(labels.MetricName)
		if first, ok := names[h]; ok && first != name {
			return true, nil
		}
		names[h] = name
	}
	return false, set.Err()
}

// KeepGroupedNames returns e with the argument of each aggregation by the
// metric name wrapped in label_replace(…, "__name__", "$1", "__name__",
// "(.+)"). Under delayed name removal (Features.DelayedNameRemoval) that
// label_replace still reads each series' name, and writing the name back
// keeps it to the end, so the aggregation groups by it and its series
// keep it in the answer. The wrapper changes no label set: a query whose
// names no function drops gets the same answer either way. e is changed
// in place; it may be an engine's statement, preprocessed.
func KeepGroupedNames(e parser.Expr) parser.Expr {
	replace := parser.Functions["label_replace"]
	str := func(s string) parser.Expr { return &parser.StringLiteral{Val: s} }
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if a, ok := n.(*parser.AggregateExpr); ok && groupsByName(a) {
			a.Expr = &parser.Call{Func: replace, Args: parser.Expressions{a.Expr,
				str(labels.MetricName), str("$1"), str(labels.MetricName), str("(.+)")}}
		}
		return nil
	})
	return e
}
