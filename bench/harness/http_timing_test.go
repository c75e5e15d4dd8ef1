package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/bench/queryset"
	"github.com/tsd-db/tsd/ingest/service"
)

// BenchmarkHTTP times whole requests through a real api.Server on a
// loopback port: the OpenTSDB and PromQL query rows on BenchmarkPromQL's
// dataset, and 1,000-point /api/put, Influx /write and telnet batches. It
// reports process CPU per request (client and server share the process, the
// same on every commit), so two commits can be compared run by run with
// benchstat: the no-regression check of changes to the listener, the
// handlers or the answers' writers (bench/README.md).
func BenchmarkHTTP(b *testing.B) {
	_, d, tl := benchDataset(b)
	quiet := slog.New(slog.DiscardHandler)
	w, err := service.NewWriter(service.Options{UIDs: tl.w.u, Head: tl.w.h, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	tn, err := service.NewTelnetHandler(w, service.TelnetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := api.New(api.Options{Addr: "127.0.0.1:0", Logger: quiet, Query: tl.otsdb, Ingest: w, Telnet: tn,
		PromQL: promapi.Options{Queryable: tl.promQ, Engine: tl.promEng, Logger: quiet, Context: context.Background()}})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	end := time.UnixMilli(d.MaxTime())
	for _, name := range []string{"single-1h", "groupby-12h"} {
		q, err := queryset.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		body := q.OpenTSDBBody(end)
		b.Run("opentsdb-"+name, func(b *testing.B) {
			benchRequests(b, func() (*http.Request, error) {
				return http.NewRequest(http.MethodPost, base+"/api/query", bytes.NewReader(body))
			}, client)
		})
		v := url.Values{}
		v.Set("query", q.PromQL[0])
		v.Set("start", strconv.FormatInt(end.Add(-q.Range).Unix(), 10))
		v.Set("end", strconv.FormatInt(end.Unix(), 10))
		v.Set("step", strconv.FormatInt(int64(max(q.Step, time.Minute)/time.Second), 10))
		uri := base + "/api/v1/query_range?" + v.Encode()
		b.Run("promql-"+name, func(b *testing.B) {
			benchRequests(b, func() (*http.Request, error) { return http.NewRequest(http.MethodGet, uri, nil) }, client)
		})
	}
	var ts int64 = 1_900_000_000
	b.Run("put-1000", func(b *testing.B) {
		benchRequests(b, func() (*http.Request, error) {
			ts += 1000
			return http.NewRequest(http.MethodPost, base+"/api/put", bytes.NewReader(putBody(ts)))
		}, client)
	})
	b.Run("influx-1000", func(b *testing.B) {
		benchRequests(b, func() (*http.Request, error) {
			ts += 1000
			return http.NewRequest(http.MethodPost, base+"/write?precision=s", bytes.NewReader(influxBody(ts)))
		}, client)
	})
	b.Run("telnet-1000", func(b *testing.B) { benchTelnet(b, ln.Addr().String(), &ts) })
}

// benchRequests sends one request per iteration and reads its answer
// whole; a status other than 200 or 204 fails the benchmark.
func benchRequests(b *testing.B, mk func() (*http.Request, error), c *http.Client) {
	b.ReportAllocs()
	cpu0, _ := processCPU()
	for b.Loop() {
		req, err := mk()
		if err != nil {
			b.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode/100 != 2 {
			b.Fatalf("status %d, err %v: %.200s", resp.StatusCode, err, body)
		}
	}
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// benchTelnet writes 1,000 put lines then "stats", whose answer comes
// after the puts are committed, per iteration, on one connection.
func benchTelnet(b *testing.B, addr string, ts *int64) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	var lines bytes.Buffer
	b.ReportAllocs()
	cpu0, _ := processCPU()
	for b.Loop() {
		*ts += 1000
		lines.Reset()
		for i := range 1000 {
			fmt.Fprintf(&lines, "put bench.http.telnet %d %d host=h%d\n", *ts+int64(i/10), i, i%10)
		}
		lines.WriteString("stats\n")
		if _, err := c.Write(lines.Bytes()); err != nil {
			b.Fatal(err)
		}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.HasPrefix(line, "put:") {
				b.Fatalf("telnet error: %s", line)
			}
			if strings.HasPrefix(line, "tsd.head.memory ") {
				break
			}
		}
	}
	cpu1, _ := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// putBody is 1,000 /api/put points of 10 series, 100 seconds from ts.
func putBody(ts int64) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"metric":"bench.http.put","timestamp":%d,"value":%d,"tags":{"host":"h%d"}}`, ts+int64(i/10), i, i%10)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// influxBody is 1,000 Influx lines of 10 series, 100 seconds from ts.
func influxBody(ts int64) []byte {
	var buf bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&buf, "bench_http,host=h%d value=%di %d\n", i%10, i, ts+int64(i/10))
	}
	return buf.Bytes()
}
