package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/queryset"
)

// TestTurnTimesEachPosition: a turn against a server that answers its
// first request of each turn slowly records that run at position 1 and
// the fast ones after it, so the first position's mean is the slow one.
func TestTurnTimesEachPosition(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n%3 == 1 { // the first run of each turn (request 0 is the warm-up)
			time.Sleep(20 * time.Millisecond)
		}
		n++
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	q, err := queryset.ByName("single-1h")
	if err != nil || len(q.PromQL) != 1 {
		t.Fatalf("single-1h: %+v, %v", q, err)
	}
	s := &server{addr: srv.URL, c: &queryset.Client{Base: srv.URL}, pos: make([][]time.Duration, 3)}
	defer s.c.Close()
	end := queryset.End(24 * time.Hour)
	if _, err := s.c.Do(context.Background(), queryset.PromQL, q, end); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := s.turn(context.Background(), q, end); err != nil {
			t.Fatal(err)
		}
	}
	mean := func(ds []time.Duration) time.Duration { return queryset.Summarize(ds).Mean }
	first, rest := mean(s.pos[0]), max(mean(s.pos[1]), mean(s.pos[2]))
	if len(s.pos[0]) != 4 || first < 20*time.Millisecond || rest >= 10*time.Millisecond {
		t.Fatalf("first run of a turn %v over %d turns, later runs %v: want the slow answer first", first, len(s.pos[0]), rest)
	}
}

func TestParsePids(t *testing.T) {
	if p, err := parsePids("12, 0", 2); err != nil || p[0] != 12 || p[1] != 0 {
		t.Fatalf("got %v, %v", p, err)
	}
	if _, err := parsePids("1", 2); err == nil || !strings.Contains(err.Error(), "1 processes for 2 servers") {
		t.Fatalf("a short list: %v", err)
	}
	if p, err := parsePids("", 3); err != nil || len(p) != 3 {
		t.Fatalf("none: %v, %v", p, err)
	}
}
