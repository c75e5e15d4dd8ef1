package promql_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
)

var selectIters = flag.Int("promql.select.iters", 300, "random matcher sets TestSelectModel checks (long runs: 20000)")

// modelPatterns are the values and expressions random matchers use:
// literals, the empty value, prefixes, alternations with "", case folding,
// and the shapes the index answers from its key postings.
var modelPatterns = []string{"x", "y", "xy", "", "m1", "m2", "x.*", ".*", ".+", "x|", "y?", "[xy]+", "(?i)X",
	"m.", "m[13]", ".*y", "x|y|m2", "a b", "a.b"}

// TestSelectModel checks Select against a brute-force model: every label
// set tested with Prometheus's matchers.
func TestSelectModel(t *testing.T) {
	s, all := modelStack(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range *selectIters {
		checkModel(t, s, all, randomMatchers(r))
	}
}

// FuzzSelectMatcher checks one matcher of any type, name and value
// against the model.
func FuzzSelectMatcher(f *testing.F) {
	for i, p := range modelPatterns {
		f.Add(uint8(i), uint8(i/4), p)
	}
	s, all := modelStack(f)
	names := []string{"__name__", "a", "b", "c", "nolabel"}
	f.Fuzz(func(t *testing.T, typ, name uint8, value string) {
		m, err := labels.NewMatcher(labels.MatchType(typ%4), names[int(name)%len(names)], value)
		if err != nil {
			return // not a valid expression: PromQL refuses it before Select
		}
		checkModel(t, s, all, []*labels.Matcher{m})
	})
}

// checkModel compares Select with the label sets ms pass.
func checkModel(t *testing.T, s *stack, all []labels.Labels, ms []*labels.Matcher) {
	t.Helper()
	var want []string
	for _, l := range all {
		if matches(l, ms) {
			want = append(want, l.String())
		}
	}
	got := selectLabels(t, s.q, true, ms...)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Select(%v):\n got %q\nwant %q", ms, got, want)
	}
}

// modelStack stores up to 40 distinct series of three metrics with tags
// a, b and c each absent or one of four values.
func modelStack(t testing.TB) (*stack, []labels.Labels) {
	s := openStack(t, stackOptions{})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	var all []labels.Labels
	for i := range 40 {
		b := labels.NewScratchBuilder(4)
		b.Add("__name__", fmt.Sprintf("m%d", 1+i%3))
		for _, k := range []string{"a", "b", "c"} {
			if v := []string{"x", "y", "xy", "a b", ""}[r.IntN(5)]; v != "" {
				b.Add(k, v)
			}
		}
		b.Sort()
		l := b.Labels()
		if slices.ContainsFunc(all, func(o labels.Labels) bool { return labels.Equal(o, l) }) {
			continue
		}
		all = append(all, l)
		mustOK(t, s.append(ctx, l, int64(i)*1000, 1))
	}
	mustOK(t, s.commit())
	return s, all
}

func randomMatchers(r *rand.Rand) []*labels.Matcher {
	names := []string{"__name__", "a", "b", "c", "nolabel"}
	types := []labels.MatchType{labels.MatchEqual, labels.MatchNotEqual, labels.MatchRegexp, labels.MatchNotRegexp}
	ms := make([]*labels.Matcher, 1+r.IntN(3))
	for i := range ms {
		ms[i] = labels.MustNewMatcher(types[r.IntN(len(types))], names[r.IntN(len(names))],
			modelPatterns[r.IntN(len(modelPatterns))])
	}
	return ms
}

func matches(l labels.Labels, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(l.Get(m.Name)) {
			return false
		}
	}
	return true
}
