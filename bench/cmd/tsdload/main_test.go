package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestJSONRun(t *testing.T) {
	var points atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pts []json.RawMessage
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/api/put" || json.Unmarshal(body, &pts) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		points.Add(int64(len(pts)))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	var out, errs bytes.Buffer
	args := []string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-proto", "json", "-hosts", "2", "-span", "10m",
		"-batch", "100", "-conns", "2", "-pid", fmt.Sprint(os.Getpid())}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	for _, want := range []string{"1200 points", "points/s:", "requests: 12 ok, 0 errors", "latency: p50", "server pid", "peak RSS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if points.Load() != 1200 {
		t.Fatalf("server got %d points", points.Load())
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-proto", "smtp"}, {"-values", "complex"}, {"-shape", "cube"},
		{"-proto", "json", "-file", "x"}, {"-file", "/no/such/file"},
	} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 || !strings.Contains(errs.String(), "tsdload:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
	}
}

// TestRuns: -runs sends the dataset once per run, each on the next span
// (no point rewritten), and prints the median.
func TestRuns(t *testing.T) {
	var mu sync.Mutex
	stamps := map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pts []struct {
			Timestamp json.Number `json:"timestamp"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &pts) != nil {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, p := range pts {
			stamps[p.Timestamp.String()]++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	var out, errs bytes.Buffer
	args := []string{"-addr", strings.TrimPrefix(ts.URL, "http://"), "-proto", "json", "-hosts", "2", "-span", "10m",
		"-batch", "100", "-conns", "2", "-runs", "3", "-pid", fmt.Sprint(os.Getpid())}
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if n := strings.Count(out.String(), "1200 points in"); n != 3 {
		t.Errorf("%d runs reported, want 3:\n%s", n, out.String())
	}
	if !regexp.MustCompile(`median of 3 runs: \d+ points/s, server \d+\.\d\d CPU s per million points`).MatchString(out.String()) {
		t.Errorf("no median line:\n%s", out.String())
	}
	// 60 steps per run, 3 runs on 3 spans: 180 timestamps, 20 points each.
	for s, n := range stamps {
		if n != 20 {
			t.Fatalf("timestamp %s sent %d times, want 20", s, n)
		}
	}
	if len(stamps) != 180 {
		t.Errorf("%d distinct timestamps, want 180", len(stamps))
	}
}
