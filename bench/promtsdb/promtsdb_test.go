package promtsdb

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/bench/gen"
)

func TestAppendBlockQuery(t *testing.T) {
	ctx := context.Background()
	d, err := Generate(gen.Config{Hosts: 2, Span: 12 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Labels) != 20 || d.NumSamples() != 20*4320 {
		t.Fatalf("%d series %d samples", len(d.Labels), d.NumSamples())
	}
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := Append(ctx, db, d, 1000); err != nil {
		t.Fatal(err)
	}
	if n := db.Head().NumSeries(); n != 20 {
		t.Fatalf("head has %d series", n)
	}
	dir, err := WriteBlock(db)
	if err != nil {
		t.Fatal(err)
	}
	size, err := MeasureBlock(db, dir)
	if err != nil {
		t.Fatal(err)
	}
	if size.Samples != uint64(d.NumSamples()) || size.Chunks == 0 || size.Index == 0 {
		t.Fatalf("block %+v", size)
	}
	// Integer walks with steps of about one: XOR chunks take 1 to 3 bytes.
	if bps := float64(size.Chunks) / float64(size.Samples); bps < 0.5 || bps > 4 {
		t.Fatalf("%.2f chunk bytes per sample", bps)
	}
	checkQueries(t, d, db)
}

func checkQueries(t *testing.T, d *Data, db *tsdb.DB) {
	t.Helper()
	ctx := context.Background()
	eng := NewEngine()
	end := d.MaxTime()
	last := len(d.Values)/len(d.Labels) - 1
	value := func(series, k int) float64 { return d.Values[k*len(d.Labels)+series] }
	for _, tc := range []struct {
		q      Query
		series int // rows in the result
		points int // points per row (the 12 h query starts 10 s before the data)
		host   string
		want   float64 // at the last step, for host
	}{
		{MaxPerMinuteOneHost, 1, 61, "", maxOf(value, 10, last-5, last)},
		{HourlyAvgByHost, 2, 12, "host_0", avgOf(value, 0, last-359, last)},
	} {
		m := runMatrix(t, ctx, eng, db, tc.q, end)
		if len(m) != tc.series {
			t.Fatalf("%s: %d series, want %d", tc.q.Expr, len(m), tc.series)
		}
		for _, s := range m {
			if s.Metric.Get("hostname") != tc.host {
				continue
			}
			got := s.Floats[len(s.Floats)-1]
			if len(s.Floats) != tc.points || got.T != end || math.Abs(got.F-tc.want) > 1e-9 {
				t.Fatalf("%s: %d points, last %v, want %d points ending %d=%v",
					tc.q.Expr, len(s.Floats), got, tc.points, end, tc.want)
			}
		}
		if _, n, err := Run(ctx, eng, db, tc.q, end); err != nil || n != tc.series {
			t.Fatalf("Run: %d series, %v", n, err)
		}
	}
}

func runMatrix(t *testing.T, ctx context.Context, eng *promql.Engine, db *tsdb.DB, q Query, end int64) promql.Matrix {
	e := time.UnixMilli(end)
	rq, err := eng.NewRangeQuery(ctx, db, nil, q.Expr, e.Add(-q.Range), e, q.Step)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rq.Close)
	m, err := rq.Exec(ctx).Matrix()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func maxOf(v func(s, k int) float64, s, from, to int) float64 {
	m := math.Inf(-1)
	for k := from; k <= to; k++ {
		m = math.Max(m, v(s, k))
	}
	return m
}

func avgOf(v func(s, k int) float64, s, from, to int) float64 {
	sum := 0.0
	for k := from; k <= to; k++ {
		sum += v(s, k)
	}
	return sum / float64(to-from+1)
}
