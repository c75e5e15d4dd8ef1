package lookup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var ctx = context.Background()

// fixture is a real store with UIDs, an index and the series registered.
type fixture struct {
	svc    *Service
	series []model
}

// model is a series as the test knows it, by name.
type model struct {
	metric string
	tags   map[string]string
}

func newFixture(t *testing.T, series []model) *fixture {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := uid.Open(ctx, db, &uid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureTable(ctx, schema.MetaTableSpec(schema.DefaultMetaTable)); err != nil {
		t.Fatal(err)
	}
	meta, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for _, s := range series {
		var tags []uid.Tag
		for k, v := range s.tags {
			tags = append(tags, uid.Tag{Key: []byte(k), Value: []byte(v)})
		}
		key, err := u.ResolvePoint(ctx, nil, []byte(s.metric), tags)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.RegisterSeries(key); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := New(Options{UIDs: u, Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, series: series}
}

// expect applies the lookup rules of doc.go to the model, by name.
func (f *fixture) expect(q Query) []string {
	var out []string
	for _, s := range f.series {
		if wild(q.Metric) || s.metric == q.Metric {
			if matchTags(s.tags, q.Tags) {
				out = append(out, render(s.metric, s.tags))
			}
		}
	}
	slices.Sort(out)
	return out
}

func matchTags(tags map[string]string, q []Pair) bool {
	keys := map[string][]string{} // key -> accepted values; nil entry: any
	var anyVals []string
	for _, p := range q {
		switch {
		case wild(p.Key) && wild(p.Value):
		case wild(p.Key):
			anyVals = append(anyVals, p.Value)
		case wild(p.Value):
			keys[p.Key] = append(keys[p.Key], "*")
		default:
			keys[p.Key] = append(keys[p.Key], p.Value)
		}
	}
	for k, vals := range keys {
		v, ok := tags[k]
		if !ok || !(slices.Contains(vals, "*") || slices.Contains(vals, v)) {
			return false
		}
	}
	if anyVals == nil {
		return true
	}
	for _, v := range tags {
		if slices.Contains(anyVals, v) {
			return true
		}
	}
	return false
}

func render(metric string, tags map[string]string) string {
	var b strings.Builder
	b.WriteString(metric)
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		fmt.Fprintf(&b, " %s=%s", k, tags[k])
	}
	return b.String()
}

func renderSeries(s Series) string {
	m := map[string]string{}
	for _, p := range s.Tags {
		m[p.Key] = p.Value
	}
	return render(s.Metric, m)
}

var testSeries = []model{
	{"sys.cpu", map[string]string{"host": "web01", "dc": "lga"}},
	{"sys.cpu", map[string]string{"host": "web02", "dc": "lga"}},
	{"sys.cpu", map[string]string{"host": "web03", "dc": "phx"}},
	{"sys.cpu", map[string]string{"host": "web01"}},
	{"sys.mem", map[string]string{"host": "web01", "dc": "phx"}},
	{"sys.mem", map[string]string{"server": "web01"}},
	{"net.bytes", map[string]string{"iface": "eth0", "host": "lga"}},
	{"héllo.世界", map[string]string{"ключ": "значение"}},
	{"up", nil},
}

func TestLookup(t *testing.T) {
	f := newFixture(t, testSeries)
	for _, m := range []string{
		"sys.cpu", "*", "sys.cpu{host=*}", "sys.cpu{dc=lga}", "sys.cpu{host=web01,host=web03}",
		"sys.cpu{host=web01,host=*}", "sys.cpu{dc=lga,host=web02}", "{*=web01}", "{=lga}", "{*=lga,*=phx}",
		"*{host=web01,*=phx}", "{host=}", "sys.mem{*=*}", "héllo.世界{ключ=*}", "up", "*{dc=*}", "{dc=phx,host=*}",
	} {
		q, err := ParseM(m)
		if err != nil {
			t.Fatalf("ParseM(%q): %v", m, err)
		}
		q.Limit = 100
		res, err := f.svc.Lookup(ctx, &q)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", m, err)
		}
		var got []string
		for _, s := range res.Series {
			got = append(got, renderSeries(s))
		}
		slices.Sort(got)
		want := f.expect(q)
		if !slices.Equal(got, want) || res.Total != len(want) {
			t.Errorf("Lookup(%q) = %d %q\nwant %d %q", m, res.Total, got, len(want), want)
		}
	}
}

func TestLookupLimitAndOrder(t *testing.T) {
	f := newFixture(t, testSeries)
	q := Query{Metric: "*", Limit: 3}
	res, err := f.svc.Lookup(ctx, &q)
	// totalResults counts what the lookup returned (OpenTSDB's
	// TimeSeriesLookup stops at the limit); 0 is no limit.
	if err != nil || res.Total != 3 || len(res.Series) != 3 {
		t.Fatalf("limit 3: %+v, %v", res, err)
	}
	q.Limit = 0
	res, _ = f.svc.Lookup(ctx, &q)
	tsuids := make([]string, len(res.Series))
	for i, s := range res.Series {
		tsuids[i] = s.TSUID
	}
	if !slices.IsSorted(tsuids) || len(tsuids) != len(testSeries) {
		t.Errorf("TSUIDs not in order: %q", tsuids)
	}
	// The first series registered is sys.cpu{dc=lga,host=web01}: metric 1,
	// tag keys host=1 dc=2 sorted by UID, values web01=1 lga=2.
	if res.Series[0].TSUID != "000001000001000001000002000002" {
		t.Errorf("first TSUID = %s", res.Series[0].TSUID)
	}
}

func TestLookupErrors(t *testing.T) {
	f := newFixture(t, testSeries)
	for _, tc := range []struct {
		q    Query
		want error
	}{
		{Query{}, ErrMissingQuery},
		{Query{Metric: "nope"}, ErrUnknownName},
		{Query{Metric: "sys.cpu", Tags: []Pair{{"nokey", "*"}}}, ErrUnknownName},
		{Query{Metric: "sys.cpu", Tags: []Pair{{"host", "web99"}}}, ErrUnknownName},
		{Query{Tags: []Pair{{"*", "nothere"}}}, ErrUnknownName},
	} {
		if _, err := f.svc.Lookup(ctx, &tc.q); !errors.Is(err, tc.want) {
			t.Errorf("Lookup(%+v) = %v, want %v", tc.q, err, tc.want)
		}
	}
}
