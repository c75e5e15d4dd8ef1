package queryset

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
)

func loadProm(t *testing.T, cfg gen.Config) *tsdb.DB {
	d, err := promtsdb.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db, err := promtsdb.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := promtsdb.Append(context.Background(), db, d, 1000); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPromQLOnPrometheus runs every PromQL query on Prometheus itself: each
// must parse, evaluate and return the series it is meant to.
func TestPromQLOnPrometheus(t *testing.T) {
	span := 12 * time.Hour
	dbs := map[gen.Shape]*tsdb.DB{
		gen.ShapeDevops:   loadProm(t, gen.Config{Hosts: 10, Span: span}),
		gen.ShapeHighCard: loadProm(t, gen.Config{Hosts: 30, Span: span, Shape: gen.ShapeHighCard}),
	}
	// Series per expression, expressions per query.
	want := map[string][2]int{"single-1h": {1, 1}, "single-5-12h": {1, 5}, "groupby-12h": {10, 1}, "max-all-8": {1, 10}, "highcard-10": {10, 1}}
	eng := promtsdb.NewEngine()
	for _, q := range Set {
		if len(q.PromQL) != want[q.Name][1] {
			t.Fatalf("%s: %d expressions", q.Name, len(q.PromQL))
		}
		for _, e := range q.PromQL {
			pq := promtsdb.Query{Expr: e, Range: q.Range, Step: q.Step}
			_, n, err := promtsdb.Run(context.Background(), eng, dbs[q.Shape], pq, End(span).UnixMilli())
			if err != nil {
				t.Fatalf("%s: %v", q.Name, err)
			}
			if n != want[q.Name][0] {
				t.Errorf("%s: %s: %d series, want %d", q.Name, e, n, want[q.Name][0])
			}
		}
	}
}

// TestVaried: a varied run names as many distinct hosts as its query,
// drawn from the dataset's, ends inside the dataset with its whole range
// in it, is the same for the same draw, and runs on Prometheus with the
// series it is meant to return.
func TestVaried(t *testing.T) {
	span := 12 * time.Hour
	dbs := map[gen.Shape]*tsdb.DB{
		gen.ShapeDevops:   loadProm(t, gen.Config{Hosts: 10, Span: span}),
		gen.ShapeHighCard: loadProm(t, gen.Config{Hosts: 30, Span: span, Shape: gen.ShapeHighCard}),
	}
	nhosts := map[gen.Shape]int{gen.ShapeDevops: 10, gen.ShapeHighCard: 30}
	want := map[string]int{"single-1h": 1, "single-5-12h": 1, "groupby-12h": 10, "max-all-8": 1, "highcard-10": 10}
	hostRE := regexp.MustCompile(`host_\d+`)
	eng := promtsdb.NewEngine()
	for i := range Set {
		q := &Set[i]
		for seed := range uint64(20) {
			v, end := q.Varied(rand.New(rand.NewPCG(seed, 1)), nhosts[q.Shape], span)
			v2, end2 := q.Varied(rand.New(rand.NewPCG(seed, 1)), nhosts[q.Shape], span)
			if !slices.Equal(v.PromQL, v2.PromQL) || !end.Equal(end2) {
				t.Fatalf("%s: one draw gave two queries", q.Name)
			}
			if end.Before(gen.DefaultStart.Add(min(q.Range, span-10*time.Second))) || end.After(End(span)) {
				t.Fatalf("%s: end %v outside the dataset", q.Name, end)
			}
			hs := hostRE.FindAllString(v.PromQL[0], -1)
			if len(hs) != q.spec.hosts || len(slices.Compact(slices.Sorted(slices.Values(hs)))) != len(hs) {
				t.Fatalf("%s: hosts %v", q.Name, hs)
			}
			if v.Name != q.Name || len(v.PromQL) != len(q.PromQL) || len(v.OpenTSDB) != len(q.OpenTSDB) {
				t.Fatalf("%s: varied into %+v", q.Name, v)
			}
			for _, e := range v.PromQL {
				pq := promtsdb.Query{Expr: e, Range: q.Range, Step: q.Step}
				_, n, err := promtsdb.Run(context.Background(), eng, dbs[q.Shape], pq, end.UnixMilli())
				if err != nil || n != want[q.Name] {
					t.Fatalf("%s: %s ending %v: %d series, %v; want %d", q.Name, e, end, n, err, want[q.Name])
				}
			}
		}
	}
	q, _ := ByName("single-1h")
	v, _ := q.Varied(rand.New(rand.NewPCG(7, 7)), 100, 24*time.Hour)
	if strings.Replace(v.PromQL[0], hostRE.FindString(v.PromQL[0]), "host_1", 1) != q.PromQL[0] {
		t.Fatalf("varied %q is not %q with another host", v.PromQL[0], q.PromQL[0])
	}
}

func TestOpenTSDBBodies(t *testing.T) {
	want := map[string]int{"single-1h": 1, "single-5-12h": 5, "groupby-12h": 1, "max-all-8": 10, "highcard-10": 1}
	end := End(24 * time.Hour)
	for _, q := range Set {
		var r Request
		if err := json.Unmarshal(q.OpenTSDBBody(end), &r); err != nil {
			t.Fatal(err)
		}
		if r.End != end.UnixMilli() || r.End-r.Start != q.Range.Milliseconds() || len(r.Queries) != want[q.Name] {
			t.Fatalf("%s: body %+v", q.Name, r)
		}
		for _, s := range r.Queries {
			if s.Metric == "" || s.Aggregator == "" || len(s.Filters) != 1 || s.Filters[0].Tagk != "hostname" {
				t.Fatalf("%s: sub-query %+v", q.Name, s)
			}
		}
	}
	if End(24*time.Hour).Unix() != gen.DefaultStart.Unix()+86390 {
		t.Fatal("End is not the last 10 s step of the day")
	}
}

// TestByNameAndSummarize: every query of the set is found by its name and
// an unknown name is an error naming it; Summarize gives the mean, the
// nearest-rank median and the largest of durations in any order.
func TestByNameAndSummarize(t *testing.T) {
	for i := range Set {
		if q, err := ByName(Set[i].Name); err != nil || q != &Set[i] {
			t.Fatalf("%s: %p, %v", Set[i].Name, q, err)
		}
	}
	if _, err := ByName("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown name: %v", err)
	}
	us := time.Microsecond
	st := Summarize([]time.Duration{3 * us, us, 2 * us, 10 * us})
	if st.Runs != 4 || st.Mean != 4*us || st.P50 != 2*us || st.Max != 10*us {
		t.Fatalf("summary %+v", st)
	}
	if st := Summarize(nil); st.Runs != 0 || st.Mean != 0 {
		t.Fatalf("empty summary %+v", st)
	}
}

// TestTSBS: the TSBS set holds TSBS's devops query types that its
// VictoriaMetrics generator writes, each one expression in that
// generator's form, with its range and step; a varied run names as many
// distinct hosts as the type, drawn from the dataset's.
func TestTSBS(t *testing.T) {
	const all = `usage_user|usage_system|usage_idle|usage_nice|usage_iowait|usage_irq|usage_softirq|usage_steal|usage_guest|usage_guest_nice`
	const five = `usage_user|usage_system|usage_idle|usage_nice|usage_iowait`
	const h8 = `host_1|host_2|host_3|host_4|host_5|host_6|host_7|host_8`
	want := []struct {
		name, expr string
		rng, step  time.Duration
		hosts      int
	}{
		{"single-groupby-1-1-1", `max(max_over_time(cpu_usage_user{hostname='host_1'}[1m])) by (__name__)`, time.Hour, time.Minute, 1},
		{"single-groupby-1-1-12", `max(max_over_time(cpu_usage_user{hostname='host_1'}[1m])) by (__name__)`, 12 * time.Hour, time.Minute, 1},
		{"single-groupby-1-8-1", `max(max_over_time(cpu_usage_user{hostname=~'` + h8 + `'}[1m])) by (__name__)`, time.Hour, time.Minute, 8},
		{"single-groupby-5-1-1", `max(max_over_time({__name__=~'cpu_(` + five + `)', hostname='host_1'}[1m])) by (__name__)`, time.Hour, time.Minute, 1},
		{"single-groupby-5-1-12", `max(max_over_time({__name__=~'cpu_(` + five + `)', hostname='host_1'}[1m])) by (__name__)`, 12 * time.Hour, time.Minute, 1},
		{"single-groupby-5-8-1", `max(max_over_time({__name__=~'cpu_(` + five + `)', hostname=~'` + h8 + `'}[1m])) by (__name__)`, time.Hour, time.Minute, 8},
		{"cpu-max-all-1", `max(max_over_time({__name__=~'cpu_(` + all + `)', hostname='host_1'}[1h])) by (__name__)`, 8 * time.Hour, time.Hour, 1},
		{"cpu-max-all-8", `max(max_over_time({__name__=~'cpu_(` + all + `)', hostname=~'` + h8 + `'}[1h])) by (__name__)`, 8 * time.Hour, time.Hour, 8},
		{"double-groupby-1", `avg(avg_over_time(cpu_usage_user{}[1h])) by (__name__, hostname)`, 12 * time.Hour, time.Hour, 0},
		{"double-groupby-5", `avg(avg_over_time({__name__=~'cpu_(` + five + `)'}[1h])) by (__name__, hostname)`, 12 * time.Hour, time.Hour, 0},
		{"double-groupby-all", `avg(avg_over_time({__name__=~'cpu_(` + all + `)'}[1h])) by (__name__, hostname)`, 12 * time.Hour, time.Hour, 0},
	}
	if len(TSBS) != len(want) {
		t.Fatalf("%d TSBS queries, want %d", len(TSBS), len(want))
	}
	hostRE := regexp.MustCompile(`host_\d+`)
	for i, w := range want {
		q := &TSBS[i]
		if q.Name != w.name || len(q.PromQL) != 1 || q.PromQL[0] != w.expr || q.Range != w.rng || q.Step != w.step || q.Shape != gen.ShapeDevops {
			t.Errorf("TSBS[%d] = %s %q %v %v, want %s %q %v %v", i, q.Name, q.PromQL, q.Range, q.Step, w.name, w.expr, w.rng, w.step)
		}
		if _, err := parser.ParseExpr(q.PromQL[0]); err != nil {
			t.Errorf("%s: %v", q.Name, err)
		}
		v, _ := q.Varied(rand.New(rand.NewPCG(3, 4)), 100, 24*time.Hour)
		hs := hostRE.FindAllString(v.PromQL[0], -1)
		if len(hs) != w.hosts || len(slices.Compact(slices.Sorted(slices.Values(hs)))) != len(hs) ||
			hostRE.ReplaceAllString(v.PromQL[0], "h") != hostRE.ReplaceAllString(q.PromQL[0], "h") {
			t.Errorf("%s varied: %q", q.Name, v.PromQL[0])
		}
	}
}
