package expr

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// evaluate computes an expression's sets: the variables' sets are paired
// by join key (their tags), then the expression runs at every timestamp
// of each pairing, a variable without a point there taking its fill value.
func (r *runner) evaluate(e *Expression) ([]*set, error) {
	names := e.tree.variables(nil)
	operands := make([][]*set, len(names))
	for i, n := range names {
		s, err := r.resolve(n)
		if err != nil {
			return nil, err
		}
		operands[i] = s
	}
	j := Join{Operator: "union"}
	if e.Join != nil {
		j = *e.Join
	}
	fills := make([]float64, len(names))
	for i, n := range names {
		fills[i] = r.fill(n, e.FillPolicy)
	}
	var out []*set
	for _, key := range joinKeys(operands, &j) {
		members := make([]*set, len(names))
		missing := false
		for i := range operands {
			members[i] = pick(operands[i], key, &j)
			missing = missing || members[i] == nil
		}
		if missing && strings.EqualFold(j.Operator, "intersection") {
			continue
		}
		if s := combine(e, names, members, fills); s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// joinKey is what pairs sets: their tags, only the query's group-by tag
// keys with useQueryTags, and with includeAggTags also the names of the
// aggregated tag keys.
func joinKey(s *set, j *Join) string {
	parts := make([]string, 0, len(s.tags)+len(s.aggTags))
	for k, v := range s.tags {
		if !j.UseQueryTags || slices.Contains(s.qtags, k) {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	if j.IncludeAggTags {
		parts = append(parts, s.aggTags...)
	}
	return strings.Join(parts, ",")
}

// joinKeys lists the keys of the operands' sets in order of first
// appearance, leaving out broadcast sets; when every operand is broadcast
// there is one key.
func joinKeys(operands [][]*set, j *Join) []string {
	var keys []string
	seen := map[string]bool{}
	for _, sets := range operands {
		if broadcast(sets, j) {
			continue
		}
		for _, s := range sets {
			if k := joinKey(s, j); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		keys = []string{""}
	}
	return keys
}

// broadcast reports an operand of one set with an empty join key (a total
// over every series): it pairs with every key.
func broadcast(sets []*set, j *Join) bool {
	return len(sets) == 1 && joinKey(sets[0], j) == ""
}

// pick returns the operand's set for key: a broadcast set, or the one
// whose key matches, or nil.
func pick(sets []*set, key string, j *Join) *set {
	if broadcast(sets, j) {
		return sets[0]
	}
	for _, s := range sets {
		if joinKey(s, j) == key {
			return s
		}
	}
	return nil
}

// combine evaluates e over the members at the union of their timestamps.
// It returns nil when no member has a point.
func combine(e *Expression, names []string, members []*set, fills []float64) *set {
	var ts []int64
	for _, m := range members {
		if m != nil {
			ts = append(ts, m.ts...)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := describe(members)
	out.ts = ts
	out.vs = make([]float64, len(ts))
	for i, t := range ts {
		out.vs[i] = e.tree.eval(func(name string) float64 {
			k := slices.Index(names, name)
			if m := members[k]; m != nil {
				if v, ok := m.at(t); ok {
					return v
				}
			}
			return fills[k]
		})
	}
	return out
}

// describe merges the members' metadata: every metric name, the tags all
// members share with one value, and the rest as aggregated tag keys.
func describe(members []*set) *set {
	out := &set{tags: map[string]string{}}
	first := true
	agg := map[string]bool{}
	for _, m := range members {
		if m == nil {
			continue
		}
		for _, n := range m.metrics {
			if !slices.Contains(out.metrics, n) {
				out.metrics = append(out.metrics, n)
			}
		}
		for _, a := range m.aggTags {
			agg[a] = true
		}
		for _, q := range m.qtags {
			if !slices.Contains(out.qtags, q) {
				out.qtags = append(out.qtags, q)
			}
		}
		if first {
			for k, v := range m.tags {
				out.tags[k] = v
			}
			first = false
			continue
		}
		for k, v := range out.tags {
			if m.tags[k] != v {
				delete(out.tags, k)
				agg[k] = true
			}
		}
		for k := range m.tags {
			if _, ok := out.tags[k]; !ok {
				agg[k] = true
			}
		}
	}
	for a := range agg {
		out.aggTags = append(out.aggTags, a)
	}
	sort.Strings(out.metrics)
	sort.Strings(out.aggTags)
	return out
}

// valueAt is s's value at t, NaN when it has none.
func valueAt(s *set, t int64) float64 {
	if v, ok := s.at(t); ok {
		return v
	}
	return math.NaN()
}
