package opentsdb_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// t0 is an hour boundary (2023-11-14T23:00:00Z), in seconds.
const t0 = 1700002800

var cpuSeries = []map[string]string{
	{"host": "web01", "dc": "lga"},
	{"host": "web02", "dc": "lga"},
	{"host": "db01", "dc": "sjc"},
	{"host": "web03", "dc": "sjc", "env": "prod"},
}

// fill writes the test data set: sys.cpu (integers, one point a minute
// for three hours, db01 with a gap), net.bytes (counters, one with a
// reset), temp (doubles at misaligned times) and ms.metric (250 ms apart).
// The first two hours of sys.cpu, and everything else, are flushed to the
// store; the third hour of sys.cpu stays in the head.
func fill(t testing.TB, s *stack) {
	cpu := func(from, to int) {
		for k, tags := range cpuSeries {
			var pts []series.Point
			for i := from; i < to; i++ {
				if k == 2 && i >= 90 && i < 105 {
					continue // db01's gap
				}
				pts = append(pts, series.IntPoint(int64(t0+60*i)*1000, int64((i*7+k*13)%100+k)))
			}
			s.put(t, "sys.cpu", tags, pts...)
		}
	}
	cpu(0, 120)
	for i := 0; i < 180; i++ {
		ts := int64(t0+10*i) * 1000
		s.put(t, "net.bytes", map[string]string{"host": "web01"}, series.IntPoint(ts, int64(1000*i)))
		v := int64(500 * i)
		if i >= 100 {
			v = int64(500*(i-100) + 7)
		}
		s.put(t, "net.bytes", map[string]string{"host": "web02"}, series.IntPoint(ts, v))
	}
	for i := 0; i < 120; i++ {
		s.put(t, "temp", map[string]string{"host": "a"}, series.Float64Point(int64(t0+30*i)*1000, 20+float64(i%7)*0.5))
	}
	for i := 0; i < 80; i++ {
		s.put(t, "temp", map[string]string{"host": "b"}, series.Float64Point(int64(t0+10+45*i)*1000, 15.25+float64(i%5)*0.75))
	}
	for i := 0; i < 40; i++ {
		s.put(t, "ms.metric", map[string]string{"host": "a"}, series.IntPoint(int64(t0)*1000+int64(250*i), int64(i)))
	}
	s.flushAll(t)
	cpu(120, 180)
}

func sec(s int64) string { return strconv.FormatInt(s, 10) }

func filt(typ, k, f string, gb bool) tsquery.Filter {
	return tsquery.Filter{Type: typ, Tagk: k, Filter: f, GroupBy: gb}
}

func TestQueryAgainstReference(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	start, end := int64(t0+600), int64(t0+2*3600+1800)
	cpu := func(agg string, fs ...tsquery.Filter) refSpec {
		return refSpec{metric: "sys.cpu", agg: agg, filters: fs, start: start * 1000, end: end * 1000}
	}
	hostAll, dcAll := filt("wildcard", "host", "*", true), filt("wildcard", "dc", "*", true)
	cases := []struct {
		m    string
		spec refSpec
	}{
		{"sum:sys.cpu{host=*,dc=*}", cpu("sum", hostAll, dcAll)},
		{"avg:sys.cpu{dc=*}", cpu("avg", dcAll)},
		{"max:sys.cpu{dc=*}", cpu("max", dcAll)},
		{"min:sys.cpu{dc=*,host=*}", cpu("min", dcAll, hostAll)},
		{"count:sys.cpu{dc=*}", cpu("count", dcAll)},
		{"sum:sys.cpu", cpu("sum")},
		{"avg:sys.cpu", cpu("avg")},
		{"sum:explicit_tags:sys.cpu{host=*,dc=*}", func() refSpec { r := cpu("sum", hostAll, dcAll); r.explicit = true; return r }()},
		{"sum:sys.cpu{host=web01|db01}", cpu("sum", filt("literal_or", "host", "web01|db01", true))},
		{"sum:sys.cpu{host=iliteral_or(WEB01|Web02)}", cpu("sum", filt("iliteral_or", "host", "WEB01|Web02", true))},
		{"sum:sys.cpu{dc=*}{host=not_literal_or(web01|web03)}", cpu("sum", dcAll, filt("not_literal_or", "host", "web01|web03", false))},
		{"sum:sys.cpu{host=not_iliteral_or(WEB01)}", cpu("sum", filt("not_iliteral_or", "host", "WEB01", true))},
		{"sum:sys.cpu{host=wildcard(web*)}", cpu("sum", filt("wildcard", "host", "web*", true))},
		{"sum:sys.cpu{host=WEB*}", cpu("sum", filt("iwildcard", "host", "WEB*", true))},
		{"sum:sys.cpu{host=regexp(^w.*[23]$)}", cpu("sum", filt("regexp", "host", "^w.*[23]$", true))},
		{"sum:sys.cpu{}{env=not_key()}", cpu("sum", filt("not_key", "env", "", false))},
		{"sum:sys.cpu{dc=lga}{host=*}", cpu("sum", filt("literal_or", "dc", "lga", true), filt("wildcard", "host", "*", false))},
	}
	for _, ds := range []struct{ spec, agg, fill string }{
		{"5m-avg", "avg", ""}, {"15m-sum", "sum", ""}, {"10m-max", "max", ""}, {"5m-count", "count", ""},
	} {
		r := cpu("sum", dcAll)
		r.dsInterval, r.dsAgg = mustDur(t, ds.spec), ds.agg
		cases = append(cases, struct {
			m    string
			spec refSpec
		}{"sum:" + ds.spec + ":sys.cpu{dc=*}", r})
	}
	for _, c := range cases {
		q := mquery(t, sec(start), sec(end), c.m)
		compare(t, c.m, s.exec(t, q), refRun(t, s, c.spec), false)
	}
}

func mustDur(t *testing.T, spec string) int64 {
	n, _ := strconv.Atoi(strings.TrimRight(spec[:strings.IndexByte(spec, '-')], "m"))
	return int64(n) * 60000
}

func TestQueryFills(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	// db01 has no points from minute 90 to 104: buckets 90..100 are empty.
	start, end := int64(t0+3600), int64(t0+2*3600)
	for _, f := range []string{"zero", "nan", "null"} {
		m := "sum:5m-sum-" + f + ":sys.cpu{host=db01}"
		r := refSpec{metric: "sys.cpu", agg: "sum", filters: []tsquery.Filter{filt("literal_or", "host", "db01", true)},
			dsInterval: 300000, dsAgg: "sum", dsFill: f, start: start * 1000, end: end * 1000}
		want := refRun(t, s, r)
		got := s.exec(t, mquery(t, sec(start), sec(end), m))
		compare(t, m, got, want, f == "null")
		body := s.execJSON(t, mquery(t, sec(start), sec(end), m))
		empty := map[string]string{"zero": `"1700008500":0.0,`, "nan": `"1700008500":"NaN",`, "null": `"1700008500":null,`}[f]
		if !strings.Contains(body, empty) {
			t.Errorf("%s: no %s in %s", m, empty, body)
		}
	}
}

func TestQueryRates(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	start, end := int64(t0), int64(t0+1800)
	base := refSpec{metric: "net.bytes", agg: "sum", rate: true, start: start * 1000, end: end * 1000}
	web02 := []tsquery.Filter{filt("literal_or", "host", "web02", true)}
	cases := []struct {
		m    string
		spec func(r refSpec) refSpec
	}{
		{"sum:rate:net.bytes", func(r refSpec) refSpec { return r }},
		{"sum:rate{counter,100000}:net.bytes", func(r refSpec) refSpec { r.counter, r.counterMax = true, 100000; return r }},
		{"sum:rate{counter,100000,1000}:net.bytes", func(r refSpec) refSpec {
			r.counter, r.counterMax, r.resetValue = true, 100000, 1000
			return r
		}},
		{"sum:rate{dropcounter}:net.bytes{host=web02}", func(r refSpec) refSpec {
			r.counter, r.dropResets, r.filters = true, true, web02
			return r
		}},
		{"avg:rate:net.bytes{host=*}", func(r refSpec) refSpec {
			r.agg, r.filters = "avg", []tsquery.Filter{filt("wildcard", "host", "*", true)}
			return r
		}},
		{"sum:1m-avg:rate:net.bytes", func(r refSpec) refSpec { r.dsInterval, r.dsAgg = 60000, "avg"; return r }},
	}
	for _, c := range cases {
		q := mquery(t, sec(start), sec(end), c.m)
		compare(t, c.m, s.exec(t, q), refRun(t, s, c.spec(base)), false)
	}
}

func TestQueryFloatsInterpolate(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	start, end := int64(t0+60), int64(t0+3000)
	for _, agg := range []string{"sum", "avg", "max", "min"} {
		m := agg + ":temp"
		r := refSpec{metric: "temp", agg: agg, start: start * 1000, end: end * 1000}
		compare(t, m, s.exec(t, mquery(t, sec(start), sec(end), m)), refRun(t, s, r), false)
	}
}

func TestQueryTSUIDs(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	a, b := s.raw[seriesName("sys.cpu", cpuSeries[0])], s.raw[seriesName("sys.cpu", cpuSeries[2])]
	ha, hb := s.tsuidHex(t, a), s.tsuidHex(t, b)
	start, end := int64(t0), int64(t0+3*3600)
	sq, err := tsquery.ParseTSUIDQuery("sum:" + strings.ToLower(hb) + "," + ha)
	if err != nil {
		t.Fatal(err)
	}
	q := &tsquery.TSQuery{Start: sec(start), End: sec(end), Queries: []*tsquery.SubQuery{sq}, ShowTSUIDs: true}
	got := s.exec(t, q)
	r := refSpec{metric: "sys.cpu", agg: "sum", start: start * 1000, end: end * 1000,
		filters: []tsquery.Filter{filt("literal_or", "host", "web01|db01", false)}}
	compare(t, "tsuids", got, refRun(t, s, r), false)
	want := []string{ha, hb}
	if hb < ha {
		want = []string{hb, ha}
	}
	if len(got) != 1 || got[0].Metric != "sys.cpu" || strings.Join(got[0].TSUIDs, ",") != strings.Join(want, ",") {
		t.Errorf("tsuid query: %+v, want tsuids %v", got, want)
	}
}

func TestQueryShowQueryAndMs(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	q := mquery(t, sec(t0), sec(t0+5), "sum:ms.metric", "max:ms.metric{host=*}")
	q.ShowQuery = true
	got := s.exec(t, q)
	if len(got) != 2 || got[1].Query["index"] != nil && got[1].Query["index"].(interface{ String() string }).String() != "1" {
		t.Fatalf("showQuery: %+v", got)
	}
	if got[0].Query["aggregator"] != "sum" || got[1].Query["metric"] != "ms.metric" {
		t.Errorf("showQuery echo: %+v", got[1].Query)
	}
	// Seconds: four points share each second's key, as OpenTSDB writes them.
	body := s.execJSON(t, mquery(t, sec(t0), sec(t0+1), "sum:ms.metric"))
	want := `[{"metric":"ms.metric","tags":{"host":"a"},"aggregateTags":[],"dps":{"1700002800":0,"1700002800":1,` +
		`"1700002800":2,"1700002800":3,"1700002801":4}}]`
	if body != want {
		t.Errorf("seconds:\n got %s\nwant %s", body, want)
	}
	q = mquery(t, "1700002800000", "1700002800600", "sum:ms.metric")
	q.MsResolution = true
	body = s.execJSON(t, q)
	want = `[{"metric":"ms.metric","tags":{"host":"a"},"aggregateTags":[],"dps":{"1700002800000":0,"1700002800250":1,"1700002800500":2}}]`
	if body != want {
		t.Errorf("ms:\n got %s\nwant %s", body, want)
	}
}

func TestQueryEmpty(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	for _, m := range []string{"sum:sys.cpu{host=nothere*}", "sum:sys.cpu{}{env=literal_or(prod)}{}"} {
		q := mquery(t, sec(t0-7200), sec(t0-3600-1), "sum:sys.cpu")
		if m == "sum:sys.cpu{host=nothere*}" {
			q = mquery(t, sec(t0), sec(t0+60), m)
		}
		if body := s.execJSON(t, q); body != "[]" {
			t.Errorf("%s: %s, want []", m, body)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	for m, want := range map[string]string{
		"sum:no.such.metric":              "No such name for 'metrics': 'no.such.metric'",
		"sum:sys.cpu{nokey=*}":            "No such name for 'tagk': 'nokey'",
		"sum:sys.cpu{host=web01|nothere}": "No such name for 'tagv': 'nothere'",
	} {
		_, err := s.eng.Execute(context.Background(), mquery(t, sec(t0), sec(t0+60), m))
		var te *tsquery.Error
		if !errors.As(err, &te) || te.Msg != want {
			t.Errorf("%s: %v, want 400 %q", m, err, want)
		}
	}
	_, err := s.eng.Execute(context.Background(), mquery(t, sec(t0+60), sec(t0), "sum:sys.cpu"))
	var te *tsquery.Error
	if !errors.As(err, &te) || !strings.HasPrefix(te.Msg, "End time [1700002800000] must be greater") {
		t.Errorf("end before start: %v", err)
	}
	q := mquery(t, sec(t0), sec(t0+60), "sum:sys.cpu")
	q.Delete = true
	if _, err := s.eng.Execute(context.Background(), q); !errors.As(err, &te) || te.Msg != "Deleting data is not enabled (tsd.http.query.allow_delete=false)" {
		t.Errorf("delete: %v", err)
	}
	// TSUIDs of two metrics: TsdbQuery.configureFromQuery's message.
	cpu, tmp := s.tsuidHex(t, s.raw[seriesName("sys.cpu", cpuSeries[0])]), s.tsuidHex(t, s.raw[seriesName("temp", map[string]string{"host": "a"})])
	sq, err := tsquery.ParseTSUIDQuery("sum:" + cpu + "," + tmp)
	if err != nil {
		t.Fatal(err)
	}
	q = &tsquery.TSQuery{Start: sec(t0), End: sec(t0 + 60), Queries: []*tsquery.SubQuery{sq}}
	if _, err := s.eng.Execute(context.Background(), q); !errors.As(err, &te) || te.Msg != "One or more TSUIDs did not share the same metric ["+cpu[:6]+"] ["+tmp[:6]+"]" {
		t.Errorf("tsuids of two metrics: %v", err)
	}
}

func TestQuerySkipUnresolvedTagVs(t *testing.T) {
	s := openStack(t, opentsdb.Options{SkipUnresolvedTagVs: true})
	fill(t, s)
	start, end := int64(t0), int64(t0+600)
	got := s.exec(t, mquery(t, sec(start), sec(end), "sum:sys.cpu{host=web01|nothere}"))
	r := refSpec{metric: "sys.cpu", agg: "sum", start: start * 1000, end: end * 1000,
		filters: []tsquery.Filter{filt("literal_or", "host", "web01", true)}}
	compare(t, "skip unresolved", got, refRun(t, s, r), false)
}

func TestQueryLimits(t *testing.T) {
	for _, c := range []struct {
		limits read.Limits
		want   string
	}{
		{read.Limits{MaxPoints: 100}, "Sorry, you have attempted to fetch more than our maximum amount of 100 data points."},
		{read.Limits{MaxBytes: 1600}, "Sorry, you have attempted to fetch more than our limit of 1600 bytes of data."},
		{read.Limits{MaxSeries: 2}, "Sorry, you have attempted to fetch more than our limit of 2 series."},
	} {
		s := openStack(t, opentsdb.Options{Limits: c.limits})
		fill(t, s)
		_, err := s.eng.Execute(context.Background(), mquery(t, sec(t0), sec(t0+3*3600), "sum:sys.cpu"))
		var le *read.LimitError
		if !errors.As(err, &le) || !errors.Is(err, read.ErrLimit) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("limits %+v: %v, want %q", c.limits, err, c.want)
		}
		// A query under the limit still runs.
		if _, err := s.eng.Execute(context.Background(), mquery(t, sec(t0), sec(t0+30), "sum:sys.cpu{host=web01}")); err != nil {
			t.Errorf("limits %+v: small query: %v", c.limits, err)
		}
	}
}

func TestQueryDelete(t *testing.T) {
	s := openStack(t, opentsdb.Options{AllowDelete: true})
	fill(t, s)
	q := mquery(t, sec(t0), sec(t0+60), "sum:net.bytes{host=web01}")
	q.Delete = true
	if got := s.exec(t, q); len(got) != 1 || len(got[0].DPS) != 7 {
		t.Fatalf("deleting query answered %+v", got)
	}
	// The hour row was deleted whole, as OpenTSDB deletes the rows it read.
	if body := s.execJSON(t, mquery(t, sec(t0), sec(t0+3599), "sum:net.bytes{host=web01}")); body != "[]" {
		t.Errorf("after delete: %s", body)
	}
}

func TestQueryAnnotations(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	ctx := context.Background()
	web01 := s.tsuidHex(t, s.raw[seriesName("sys.cpu", cpuSeries[0])])
	for _, a := range []annotation.Annotation{
		{TSUID: web01, StartTime: t0 + 120, Description: "deploy", Given: annotation.FieldDescription},
		{TSUID: web01, StartTime: t0 + 60, Description: "first", Notes: "n", Given: annotation.FieldDescription | annotation.FieldNotes},
		{TSUID: web01, StartTime: t0 + 7200, Description: "outside", Given: annotation.FieldDescription},
		{StartTime: t0 + 30, Description: "global", Given: annotation.FieldDescription},
	} {
		if _, err := s.notes.Put(ctx, &a, false); err != nil {
			t.Fatal(err)
		}
	}
	q := mquery(t, sec(t0), sec(t0+600), "sum:sys.cpu{host=web01|web02}")
	q.GlobalAnnotations = true
	body := s.execJSON(t, q)
	notes := `"annotations":[{"tsuid":"` + web01 + `","description":"first","notes":"n","startTime":1700002860,"endTime":0},` +
		`{"tsuid":"` + web01 + `","description":"deploy","notes":"","startTime":1700002920,"endTime":0}],` +
		`"globalAnnotations":[{"tsuid":"","description":"global","notes":"","startTime":1700002830,"endTime":0}],"dps":`
	if strings.Count(body, notes) != 1 || strings.Contains(body, "outside") {
		t.Errorf("annotations:\n%s\nwant one group with\n%s", body, notes)
	}
	q.NoAnnotations = true
	if body := s.execJSON(t, q); strings.Contains(body, "nnotations") {
		t.Errorf("noAnnotations: %s", body)
	}
}

func TestQueryTimeout(t *testing.T) {
	s := openStack(t, opentsdb.Options{Timeout: time.Nanosecond})
	fill(t, s)
	_, err := s.eng.Execute(context.Background(), mquery(t, sec(t0), sec(t0+3*3600), "sum:sys.cpu{host=*}"))
	var te *opentsdb.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, opentsdb.ErrTimeout) || te.Timeout != time.Nanosecond {
		t.Fatalf("got %v, want a *TimeoutError", err)
	}
}
