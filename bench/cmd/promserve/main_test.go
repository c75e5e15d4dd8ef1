package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/bench/queryset"
)

// start runs promserve on an ephemeral port with 2 hosts x 2 h and returns
// its base URL; the server stops when the test ends.
func start(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errs bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-hosts", "2", "-span", "2h", "-dir", dir, "-addr", "127.0.0.1:0"}, pw, &errs)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v, %s", err, errs.String())
	}
	go io.Copy(io.Discard, pr)
	want := "promserve: 14400 samples of 20 series in a block, serving on 127.0.0.1:"
	if !strings.HasPrefix(line, want) {
		t.Fatalf("ready line %q, want prefix %q", line, want)
	}
	t.Cleanup(func() {
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("exit %d: %s", c, errs.String())
		}
	})
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, want[:len(want)-len("127.0.0.1:")]))
}

type answer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

func get(t *testing.T, target string) (int, []byte, answer) {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: not JSON: %v: %.300s", target, err, b)
	}
	return resp.StatusCode, b, a
}

// TestServe checks query_range answers against the engine run directly on
// the same dataset, the error JSON and /api/version.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	base := start(t, dir)
	if blocks, _ := filepath.Glob(filepath.Join(dir, "*", "meta.json")); len(blocks) != 1 {
		t.Fatalf("%d blocks in %s", len(blocks), dir)
	}
	m := direct(t)
	end := queryset.End(2 * time.Hour)
	for _, q := range []promtsdb.Query{promtsdb.MaxPerMinuteOneHost, promtsdb.HourlyAvgByHost} {
		q.Range = time.Hour
		v := url.Values{"query": {q.Expr}, "start": {strconv.FormatInt(end.Add(-q.Range).Unix(), 10)},
			"end": {strconv.FormatInt(end.Unix(), 10)}, "step": {strconv.FormatFloat(q.Step.Seconds(), 'f', -1, 64)}}
		status, body, a := get(t, base+"/api/v1/query_range?"+v.Encode())
		if status != 200 || a.Status != "success" || a.Data.ResultType != "matrix" {
			t.Fatalf("%s: status %d: %.300s", q.Expr, status, body)
		}
		compare(t, q.Expr, a, m(q, end))
	}
	checkErrors(t, base)
	if status, body, _ := get(t, base+"/api/version"); status != 200 || !bytes.Contains(body, []byte(`"version"`)) {
		t.Fatalf("/api/version: %d %s", status, body)
	}
}

// direct loads the same dataset into a second Prometheus tsdb and returns
// a function running a range query through the engine directly.
func direct(t *testing.T) func(promtsdb.Query, time.Time) promql.Matrix {
	d, err := promtsdb.Generate(gen.Config{Hosts: 2, Span: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	db, err := promtsdb.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := promtsdb.Append(context.Background(), db, d, promtsdb.DefaultCommitEvery); err != nil {
		t.Fatal(err)
	}
	eng := promtsdb.NewEngine()
	return func(q promtsdb.Query, end time.Time) promql.Matrix {
		rq, err := eng.NewRangeQuery(context.Background(), db, nil, q.Expr, end.Add(-q.Range), end, q.Step)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rq.Close)
		m, err := rq.Exec(context.Background()).Matrix()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func compare(t *testing.T, expr string, a answer, m promql.Matrix) {
	t.Helper()
	if len(a.Data.Result) != len(m) || len(m) == 0 {
		t.Fatalf("%s: %d series, engine %d", expr, len(a.Data.Result), len(m))
	}
	for i, s := range m {
		got := a.Data.Result[i]
		if len(got.Metric) != s.Metric.Len() || len(got.Values) != len(s.Floats) {
			t.Fatalf("%s: series %d: %v with %d points, engine %v with %d", expr, i, got.Metric, len(got.Values), s.Metric, len(s.Floats))
		}
		for k, v := range got.Metric {
			if s.Metric.Get(k) != v {
				t.Fatalf("%s: series %d label %s=%q, engine %q", expr, i, k, v, s.Metric.Get(k))
			}
		}
		for j, p := range s.Floats {
			ts, _ := got.Values[j][0].(float64)
			val, _ := got.Values[j][1].(string)
			if ts != float64(p.T)/1000 || val != strconv.FormatFloat(p.F, 'f', -1, 64) {
				t.Fatalf("%s: series %d point %d: [%v %q], engine [%d %v]", expr, i, j, got.Values[j][0], val, p.T, p.F)
			}
		}
	}
}

func checkErrors(t *testing.T, base string) {
	t.Helper()
	status, body, a := get(t, base+"/api/v1/query_range?query=max(&start=0&end=60&step=15")
	if status != 400 || a.Status != "error" || a.ErrorType != "bad_data" || !strings.HasPrefix(a.Error, `invalid parameter "query": `) {
		t.Fatalf("bad query: %d %s", status, body)
	}
	status, body, a = get(t, base+"/api/v1/query_range?query=up&start=60&end=0&step=15")
	if status != 400 || a.ErrorType != "bad_data" || !strings.Contains(a.Error, `"end"`) {
		t.Fatalf("end before start: %d %s", status, body)
	}
	// An instant query by form POST answers a vector.
	resp, err := http.PostForm(base+"/api/v1/query", url.Values{
		"query": {`cpu_usage_user{hostname="host_1"}`}, "time": {strconv.FormatInt(queryset.End(2*time.Hour).Unix(), 10)}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var v answer
	if err := json.Unmarshal(b, &v); err != nil || resp.StatusCode != 200 || v.Data.ResultType != "vector" ||
		len(v.Data.Result) != 1 || v.Data.Result[0].Metric["hostname"] != "host_1" {
		t.Fatalf("instant query: %d %s", resp.StatusCode, b)
	}
}

func TestFlags(t *testing.T) {
	var out, errs bytes.Buffer
	for _, args := range [][]string{{"-values", "complex"}, {"-nope"}} {
		if code := run(context.Background(), args, &out, &errs); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	if code := run(context.Background(), []string{"-hosts", "1", "-span", "1h", "-addr", "256.0.0.1:1", "-dir", t.TempDir()}, &out, &errs); code != 1 {
		t.Errorf("bad -addr: exit %d", code)
	}
}
