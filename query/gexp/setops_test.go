package gexp

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// nameIDs is a UID table in a map: the set functions only read it.
type nameIDs map[uid.Kind]map[string]uint64

func (n nameIDs) ID(kind uid.Kind, name string) (uint64, bool, error) {
	id, ok := n[kind][name]
	return id, ok, nil
}

var testIDs = nameIDs{
	uid.Metric: {"m": 2, "n": 1},
	uid.TagK:   {"host": 1, "dc": 2, "rack": 3},
	uid.TagV:   {"h1": 2, "h2": 1, "x": 3},
}

func grp(metric string, tags []opentsdb.Tag, agg []string, pts ...series.Point) opentsdb.Group {
	return opentsdb.Group{Metric: metric, Tags: tags, AggregateTags: agg, Points: pts}
}

func host(v string) []opentsdb.Tag { return []opentsdb.Tag{{Key: "host", Value: v}} }

func show(gs []opentsdb.Group) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "%s%v%v:", g.Metric, g.Tags, g.AggregateTags)
		for _, p := range g.Points {
			fmt.Fprintf(&b, " %d=%v", p.T, p.Float())
			if p.IsInt() {
				b.WriteString("i")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestSetFunctions: SumSeries, DiffSeries, MultiplySeries and
// DivideSeries as OpenTSDB 2.4.1 runs them (ExpressionIterator over a
// UnionIterator of TimeSyncedIterators, read through EDPtoDPS), answers
// worked out by hand:
//
//   - a holds host=h1 and host=h2, b holds host=h1 and a tagless series;
//     answers come in flattened tag UID order: the tagless key (empty)
//     first, then h2 (tagv UID 1) before h1 (tagv UID 2);
//   - h1 pairs a's points with b's by position: (0,1)+(0,100) at 0 and
//     (60,2)+(30,4) at min(60,30)=30;
//   - h2 and the tagless key have one member; the other counts 0; a's NaN
//     counts 0;
//   - the tagless answer has no tags, since a (the first parameter) has
//     no member there, and is named n, its only member's metric;
//   - h1 is named n, the smaller metric UID (n=1 < m=2), with a's tags
//     and the union of aggregated tags in tag key UID order;
//   - every point is a double; x/0 is 0 (JEXL's lenient division).
func TestSetFunctions(t *testing.T) {
	a := []opentsdb.Group{
		grp("m", host("h1"), []string{"rack"}, series.IntPoint(0, 1), series.IntPoint(60, 2)),
		grp("m", host("h2"), nil, series.IntPoint(0, 10), series.Float64Point(60, math.NaN())),
	}
	b := []opentsdb.Group{
		grp("n", host("h1"), []string{"rack", "dc"}, series.IntPoint(0, 100), series.Float64Point(30, 4)),
		grp("n", nil, nil, series.IntPoint(0, 7)),
	}
	want := map[string]string{
		"sumSeries":  "n[][]: 0=7\nm[{host h2}][]: 0=10 60=0\nn[{host h1}][dc rack]: 0=101 30=6\n",
		"diffSeries": "n[][]: 0=-7\nm[{host h2}][]: 0=10 60=0\nn[{host h1}][dc rack]: 0=-99 30=-2\n",
		"multiply":   "n[][]: 0=0\nm[{host h2}][]: 0=0 60=0\nn[{host h1}][dc rack]: 0=100 30=8\n",
		"divide":     "n[][]: 0=0\nm[{host h2}][]: 0=0 60=0\nn[{host h1}][dc rack]: 0=0.01 30=0.5\n",
	}
	for name, w := range want {
		got, err := combine(&env{ids: testIDs}, setOps[name], [][]opentsdb.Group{a, b})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s := show(got); s != w {
			t.Errorf("%s:\n%s\nwant\n%s", name, s, w)
		}
	}
	// Three parameters fold left to right: (a/b)/c, a zero divisor
	// anywhere giving 0 from there on.
	c := []opentsdb.Group{grp("m", host("h1"), nil, series.IntPoint(0, 0), series.IntPoint(60, 2))}
	got, err := combine(&env{ids: testIDs}, opDiv, [][]opentsdb.Group{a[:1], b[:1], c})
	if err != nil {
		t.Fatal(err)
	}
	if s, w := show(got), "n[{host h1}][dc rack]: 0=0 30=0.25\n"; s != w {
		t.Errorf("a/b/c = %s, want %s", s, w)
	}
}

// TestSetFunctionErrors: SumSeries.evaluate's argument count, the "No
// more elements" of TimeSyncedIterator.next(int) when paired series hold
// different numbers of points, and an aliased member (no metric UID).
func TestSetFunctionErrors(t *testing.T) {
	one := []opentsdb.Group{grp("m", host("h1"), nil, series.IntPoint(0, 1))}
	two := []opentsdb.Group{grp("n", host("h1"), nil, series.IntPoint(0, 1), series.IntPoint(60, 1))}
	many := make([][]opentsdb.Group, 27)
	for i := range many {
		many[i] = one
	}
	for _, c := range []struct {
		in   [][]opentsdb.Group
		want string
	}{
		{[][]opentsdb.Group{one}, "Must have 2 to 26 series, got 1 instead"},
		{many, "Must have 2 to 26 series, got 27 instead"},
		{[][]opentsdb.Group{one, two}, "No more elements"},
		{[][]opentsdb.Group{one, {grp("alias-name", host("h1"), nil, series.IntPoint(0, 1))}},
			"Wrong id.length = 0 which is != 3 required for 'metrics'"},
	} {
		_, err := combine(&env{ids: testIDs}, opSum, c.in)
		if err == nil || err.Error() != c.want || !errors.Is(err, tsquery.ErrBadRequest) {
			t.Errorf("%d params: %v, want %q", len(c.in), err, c.want)
		}
	}
	if got, err := combine(&env{ids: testIDs}, opSum, nil); err != nil || len(got) != 0 {
		t.Errorf("no series: %v %v, want none", got, err)
	}
	if got, err := combine(&env{ids: testIDs}, opSum, many[:26]); err != nil || len(got) != 1 || got[0].Points[0].Float() != 26 {
		t.Errorf("26 series: %v %v, want one answer of 26", show(got), err)
	}
}
