package harness

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/promapi"
)

// BenchmarkPromQLHandler runs the one-host query through the Prometheus
// HTTP API's query_range handler on a reused request, without a network:
// the handler's own cost over BenchmarkPromQL's engine run.
func BenchmarkPromQLHandler(b *testing.B) {
	_, d, tl := benchDataset(b)
	a := promapi.New(promapi.Options{Queryable: tl.promQ, Engine: tl.promEng, Logger: slog.New(slog.DiscardHandler), Context: context.Background()})
	q := promQueries[0]
	end := time.UnixMilli(d.MaxTime())
	v := url.Values{}
	v.Set("query", q.Expr)
	v.Set("start", strconv.FormatInt(end.Add(-q.Range).Unix(), 10))
	v.Set("end", strconv.FormatInt(end.Unix(), 10))
	v.Set("step", "60")
	uri := "/api/v1/query_range?" + v.Encode()
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	cpu0, _ := processCPU()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI(uri)
		a.QueryRange(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}
