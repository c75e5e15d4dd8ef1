package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAgainstServer runs the set against a tiny real HTTP server that
// answers every query with an empty success.
func TestAgainstServer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/query" {
			w.Write([]byte("[]"))
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer ts.Close()
	var out, errs bytes.Buffer
	if code := run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-n", "2"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	for _, want := range []string{"| floor: GET /api/version | - |", "| single-1h | opentsdb |", "| highcard-10 | promql |", " ms | 0 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFailures(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	var out, errs bytes.Buffer
	if code := run([]string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-n", "1", "-only", "single-1h"}, &out, &errs); code != 1 ||
		!strings.Contains(out.String(), "first error") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, args := range [][]string{{"-api", "sql"}, {"-only", "("}, {"-n", "0"}} {
		if code := run(args, &out, &errs); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// TestPeer runs the set with a slower peer: every PromQL query and the
// floor also run there, OpenTSDB queries do not, and each peer row carries
// the ratio tsd/peer of the means, here well under 1.
func TestPeer(t *testing.T) {
	tsd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/query" {
			w.Write([]byte("[]"))
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer tsd.Close()
	var promql, other atomic.Int64
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Millisecond)
		switch r.URL.Path {
		case "/api/v1/query_range":
			promql.Add(1)
		case "/api/version":
		default:
			other.Add(1)
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer peer.Close()
	var out, errs bytes.Buffer
	args := []string{"-addr", strings.TrimPrefix(tsd.URL, "http://"), "-peer", strings.TrimPrefix(peer.URL, "http://"),
		"-n", "2", "-only", "single-1h|max-all-8"}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	// single-1h is one expression, max-all-8 ten, two runs each.
	if promql.Load() != 2*(1+10) || other.Load() != 0 {
		t.Fatalf("peer saw %d query_range and %d other requests:\n%s", promql.Load(), other.Load(), out.String())
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, "| Prometheus peer |") && !strings.Contains(line, "| promql (Prometheus peer) |") {
			if strings.Contains(line, "| opentsdb |") && !strings.HasSuffix(line, " | - |") {
				t.Errorf("opentsdb row with a ratio: %s", line)
			}
			continue
		}
		rows++
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		r, err := strconv.ParseFloat(cells[len(cells)-1], 64)
		if err != nil || r <= 0 || r >= 1 {
			t.Errorf("peer row's ratio %q not in (0, 1): %s", cells[len(cells)-1], line)
		}
	}
	if rows != 3 || !strings.Contains(out.String(), "| query | api | mean | p50 | p99 | errors | tsd/peer |") {
		t.Fatalf("%d peer rows, want the floor and two queries:\n%s", rows, out.String())
	}
}
