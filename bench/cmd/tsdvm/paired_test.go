package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPairedMeansTakeTurns runs the query means against two HTTP servers
// answering like Prometheus, one slower than the other: each query's runs
// reach them in turns of f.queries/meanRounds (a's, then b's, and again),
// and each side's mean is its own server's.
func TestPairedMeansTakeTurns(t *testing.T) {
	var mu sync.Mutex
	var order []string
	serve := func(name string, delay time.Duration) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			time.Sleep(delay)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		}))
	}
	fast, slow := serve("a", time.Millisecond), serve("b", 20*time.Millisecond)
	defer fast.Close()
	defer slow.Close()
	f, err := parse([]string{"-n", "8", "-turns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &daemon{name: "a", http: strings.TrimPrefix(fast.URL, "http://")}
	b := &daemon{name: "b", http: strings.TrimPrefix(slow.URL, "http://")}
	var turns []string
	logf := func(format string, args ...any) { turns = append(turns, fmt.Sprintf(format, args...)) }
	ma, mb, err := pairedMeans(context.Background(), f, a, b, logf)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * meanRounds * len(eligible(f)); len(turns) != want || !strings.HasPrefix(turns[0], "a single-1h turn 1 of 4: 2 runs, mean ") {
		t.Fatalf("-turns logged %d lines, want %d, the first for a's first turn of single-1h: %q", len(turns), want, turns)
	}
	qs := eligible(f)
	if len(ma) != len(qs) || len(mb) != len(qs) {
		t.Fatalf("means for %d and %d queries, want %d", len(ma), len(mb), len(qs))
	}
	for _, q := range qs {
		if ma[q.Name] <= 0 || ma[q.Name] >= mb[q.Name] {
			t.Fatalf("%s: mean %v on the fast server, %v on the slow one", q.Name, ma[q.Name], mb[q.Name])
		}
	}
	// Each run of a query sends one request per expression.
	i := 0
	for _, q := range qs {
		per := 2 * len(q.PromQL) // 8 runs in 4 turns: 2 runs a turn
		for turn := range 2 * meanRounds {
			want := []string{"a", "b"}[turn%2]
			for range per {
				if order[i] != want {
					t.Fatalf("%s, turn %d: request %d went to %s, want %s (order %v)", q.Name, turn, i, order[i], want, order)
				}
				i++
			}
		}
	}
	if i != len(order) {
		t.Fatalf("%d requests, want %d", len(order), i)
	}
}
