package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
