package opentsdb_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// BenchmarkRollupRead runs an hourly rollup query under each read plan:
// 20 series over 30 days (a point every 15 min, all flushed: 600 day
// rows of 1h cells) and one series over one day (the per-call costs of
// a small read). It measures the read plumbing around the cells as much
// as their decoding.
func BenchmarkRollupRead(b *testing.B) {
	for _, data := range []struct {
		name        string
		hosts, days int
	}{{"20x30d", 20, 30}, {"1x1d", 1, 1}} {
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			b.Run(data.name+"/"+plan.String(), func(b *testing.B) {
				e := openRollupEnvPlan(b, schema.FormatDense, nil, plan)
				for h := range data.hosts {
					pts := make([]series.Point, data.days*96)
					for i := range pts {
						pts[i] = series.IntPoint(int64(d0+900*i)*1000, int64(i*7+h)%100)
					}
					e.s.put(b, "roll", map[string]string{"host": "h" + strconv.Itoa(h)}, pts...)
				}
				e.s.flushAll(b)
				end := int64(d0 + data.days*86400 - 1)
				if body := e.execBody(b, "sum:1h-avg:roll", d0, end, true); !strings.Contains(body, `"table":"tsdb-rollup-1h"`) {
					b.Fatalf("not a rollup read: %s", body)
				}
				ctx := context.Background()
				var buf []byte
				b.ReportAllocs()
				for b.Loop() {
					res, err := e.s.eng.Execute(ctx, mquery(b, sec(d0), sec(end), "sum:1h-avg:roll"))
					if err != nil {
						b.Fatal(err)
					}
					buf = res.AppendJSON(buf[:0], opentsdb.JSONOptions{})
					res.Release()
				}
				if len(buf) < data.days*24 {
					b.Fatalf("short answer: %s", buf)
				}
			})
		}
	}
}

// BenchmarkAppendJSONFresh writes a grouped answer (20 hosts, 30 days of
// 1h-avg: 14,400 points) into a nil buffer each time, as a first answer
// does: the cost of growing the buffer shows in B/op.
func BenchmarkAppendJSONFresh(b *testing.B) {
	e := openRollupEnvPlan(b, schema.FormatDense, nil, read.PlanScan)
	for h := range 20 {
		pts := make([]series.Point, 30*96)
		for i := range pts {
			pts[i] = series.IntPoint(int64(d0+900*i)*1000, int64(i*7+h)%100)
		}
		e.s.put(b, "roll", map[string]string{"host": "h" + strconv.Itoa(h)}, pts...)
	}
	e.s.flushAll(b)
	res, err := e.s.eng.Execute(context.Background(), mquery(b, sec(d0), sec(d0+30*86400-1), "avg:1h-avg:roll{host=*}"))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Release()
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = res.AppendJSON(nil, opentsdb.JSONOptions{})
	}
	if n := strings.Count(string(out), `"metric"`); n != 20 {
		b.Fatalf("%d groups, want 20", n)
	}
}
