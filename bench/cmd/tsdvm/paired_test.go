package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/queryset"
)

// TestPairedMeansTakeTurns runs the query means against two HTTP servers
// answering like Prometheus, one slower than the other: each query's runs
// reach them in turns of -turn-runs (a's, then b's, and again),
// and each side's mean is its own server's. A third, the floor, takes its
// turn after b's on floorQuery alone.
func TestPairedMeansTakeTurns(t *testing.T) {
	var mu sync.Mutex
	var order []string
	serve := func(name string, delay time.Duration) *httptest.Server {
		return promServer(delay, func(*http.Request) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		})
	}
	fast, slow, fl := serve("a", time.Millisecond), serve("b", 20*time.Millisecond), serve("f", 0)
	defer fast.Close()
	defer slow.Close()
	defer fl.Close()
	f, err := parse([]string{"-n", "8", "-turn-runs", "2", "-turns"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &daemon{name: "a", http: strings.TrimPrefix(fast.URL, "http://")}
	b := &daemon{name: "b", http: strings.TrimPrefix(slow.URL, "http://")}
	var turns []string
	logf := func(format string, args ...any) { turns = append(turns, fmt.Sprintf(format, args...)) }
	floor := &daemon{name: "f", http: strings.TrimPrefix(fl.URL, "http://")}
	ma, mb, fr, err := pairedMeans(context.Background(), f, eligible(f), a, b, floor, 0, logf)
	if err != nil {
		t.Fatal(err)
	}
	if fr.mean <= 0 || fr.mean >= ma[floorQuery] {
		t.Fatalf("floor mean %v, a's %v: want the floor's own, under a's", fr.mean, ma[floorQuery])
	}
	// b sleeps 20 ms an answer: none of its turns is at loopback speed.
	if fr.turns != meanRounds(f) || fr.hot[1] != 0 || fr.hot[0] > fr.turns || fr.hot[2] > fr.turns {
		t.Fatalf("turns %d, at loopback speed %v: want %d turns, none of b's", fr.turns, fr.hot, meanRounds(f))
	}
	// Each connection's first answer, off the clock, then the turns.
	if want := 3 + (2*len(eligible(f))+1)*meanRounds(f); len(turns) != want ||
		!strings.HasPrefix(turns[0], "a: the first answer on its connection (single-1h, not in the means): ") ||
		!strings.HasPrefix(turns[3], "a single-1h turn 1 of 4: 2 runs, mean ") {
		t.Fatalf("logged %d lines, want %d: three warm-ups, then a's first turn of single-1h: %q", len(turns), want, turns)
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
	// A warm-up each, then each run of a query sends one request per
	// expression.
	if strings.Join(order[:3], "") != "abf" {
		t.Fatalf("warm-ups went to %v, want a, b, f", order[:3])
	}
	i := 3
	for _, q := range qs {
		per := 2 * len(q.PromQL) // 8 runs in 4 turns: 2 runs a turn
		sides := []string{"a", "b"}
		if q.Name == floorQuery {
			sides = append(sides, "f")
		}
		for turn := range len(sides) * meanRounds(f) {
			want := sides[turn%len(sides)]
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

// TestFloorAnswersEveryHead: the floor answers each request head on a
// keep-alive connection with its fixed response, whatever the target,
// to a lean client and to net/http alike.
func TestFloorAnswersEveryHead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := `{"status":"success","data":{"resultType":"matrix","result":[]}}`
	go serveFloor(ln, floorResponse([]byte(body)))
	c := &queryset.Client{Base: "http://" + ln.Addr().String()}
	defer c.Close()
	f, err := parse(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range eligible(f) {
		if _, err := c.Do(context.Background(), queryset.PromQL, q, queryset.End(f.cfg.Span)); err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
	}
	if st := c.Floor(context.Background(), 3); st.Errors > 0 || st.Runs != 3 {
		t.Fatalf("version on the same connection: %+v", st)
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/anything?x=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != body || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("net/http got %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

// recordingPair starts two HTTP servers, a and b, that answer every
// request with an empty matrix and record its raw query string in
// targets under their name; they stop with the test.
func recordingPair(t *testing.T) (a, b *daemon, targets map[string][]string) {
	var mu sync.Mutex
	targets = map[string][]string{}
	serve := func(name string) *daemon {
		srv := promServer(0, func(r *http.Request) {
			mu.Lock()
			targets[name] = append(targets[name], r.URL.RawQuery)
			mu.Unlock()
		})
		t.Cleanup(srv.Close)
		return &daemon{name: name, http: strings.TrimPrefix(srv.URL, "http://")}
	}
	return serve("a"), serve("b"), targets
}

// TestVariedMeansSameDraws: varied runs send each side of a turn the same
// queries, one per run, all different from the fixed query and from one
// another, and no floor takes a turn.
func TestVariedMeansSameDraws(t *testing.T) {
	a, b, targets := recordingPair(t)
	f, err := parse([]string{"-n", "6", "-turn-runs", "3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb, err := variedMeans(context.Background(), f, a, b, 1, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	qs := eligible(f)
	if len(ma) != len(qs) || len(mb) != len(qs) {
		t.Fatalf("means for %d and %d queries, want %d", len(ma), len(mb), len(qs))
	}
	ta, tb := targets["a"][1:], targets["b"][1:] // after each connection's warm-up
	if strings.Join(ta, "\n") != strings.Join(tb, "\n") {
		t.Fatal("the two sides were sent different queries")
	}
	seen := map[string]bool{}
	for _, q := range qs {
		seen[strings.TrimPrefix(queryset.PromTarget(q, q.PromQL[0], queryset.End(f.cfg.Span)), "/api/v1/query_range?")] = true
	}
	for _, tg := range ta {
		if seen[tg] {
			t.Fatalf("%q sent twice, or the fixed query sent", tg)
		}
		seen[tg] = true
	}
	if len(ta) == 0 {
		t.Fatal("no varied runs")
	}
	// The second stream (rows in the store) meets none of the first's.
	if _, _, err := variedMeans(context.Background(), f, a, b, 2, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets["a"][len(ta)+2:] {
		if seen[tg] {
			t.Fatalf("%q sent again in the second stream", tg)
		}
	}
	f.vary = false
	if ma, _, err := variedMeans(context.Background(), f, a, b, 1, nil); ma != nil || err != nil {
		t.Fatalf("-vary=false: means %v, %v", ma, err)
	}
}

// TestTSBSMeans: TSBS's queries go to each side the same, each in its
// TSBS form (one expression), f.queries runs of each type, none twice;
// -tsbs=false and a dataset without them run none.
func TestTSBSMeans(t *testing.T) {
	a, b, targets := recordingPair(t)
	f, err := parse([]string{"-n", "4", "-turn-runs", "2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb, err := tsbsMeans(context.Background(), f, a, b, 3, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(ma) != len(queryset.TSBS) || len(mb) != len(queryset.TSBS) {
		t.Fatalf("means for %d and %d queries, want %d", len(ma), len(mb), len(queryset.TSBS))
	}
	ta, tb := targets["a"][1:], targets["b"][1:] // after each connection's warm-up
	if strings.Join(ta, "\n") != strings.Join(tb, "\n") || len(ta) != 4*len(queryset.TSBS) {
		t.Fatalf("sent %d and %d queries, want the same %d", len(ta), len(tb), 4*len(queryset.TSBS))
	}
	byName := 0
	for _, tg := range ta {
		if v, _ := url.ParseQuery(tg); strings.HasSuffix(v.Get("query"), ") by (__name__)") || strings.HasSuffix(v.Get("query"), ") by (__name__, hostname)") {
			byName++
		}
	}
	if byName != len(ta) || len(slices.Compact(slices.Sorted(slices.Values(ta)))) != len(ta) {
		t.Fatalf("%d of %d in TSBS's form; queries %q", byName, len(ta), ta)
	}
	// -tsbs-n sets their runs apart from -n.
	f.tsbsN = 2
	n := len(targets["a"])
	if _, _, err := tsbsMeans(context.Background(), f, a, b, 3, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if got := len(targets["a"]) - n; got != 1+2*len(queryset.TSBS) { // a new connection's warm-up, then the runs
		t.Fatalf("-tsbs-n 2: %d queries sent, want %d", got, 1+2*len(queryset.TSBS))
	}
	f.tsbs = false
	if ma, _, err := tsbsMeans(context.Background(), f, a, b, 3, nil); ma != nil || err != nil {
		t.Fatalf("-tsbs=false: means %v, %v", ma, err)
	}
	f.tsbs, f.cfg.Shape = true, gen.ShapeHighCard
	if ma, _, err := tsbsMeans(context.Background(), f, a, b, 3, nil); ma != nil || err != nil {
		t.Fatalf("highcard: means %v, %v", ma, err)
	}
}

// TestGrafanaMeans: with -grafana every run of the set's queries reaches
// both servers as a POST of a form asking for gzip, each side's means
// are its own, and -grafana=false sends nothing.
func TestGrafanaMeans(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]int{}
	serve := func(name string, delay time.Duration) *httptest.Server {
		return promServer(delay, func(r *http.Request) {
			r.ParseForm()
			mu.Lock()
			sent[fmt.Sprintf("%s %s %s gzip=%v query=%v", name, r.Method, r.Header.Get("Content-Type"),
				strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"), r.PostForm.Get("query") != "")]++
			mu.Unlock()
		})
	}
	fast, slow := serve("a", time.Millisecond), serve("b", 20*time.Millisecond)
	defer fast.Close()
	defer slow.Close()
	a := &daemon{name: "a", http: strings.TrimPrefix(fast.URL, "http://")}
	b := &daemon{name: "b", http: strings.TrimPrefix(slow.URL, "http://")}
	logf := func(string, ...any) {}
	f, err := parse([]string{"-n", "4", "-turn-runs", "2", "-grafana=false"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ma, mb, err := grafanaMeans(context.Background(), f, a, b, logf); ma != nil || mb != nil || err != nil || len(sent) != 0 {
		t.Fatalf("-grafana=false: %v %v %v, sent %v", ma, mb, err, sent)
	}
	f.grafana = true
	ma, mb, err := grafanaMeans(context.Background(), f, a, b, logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range eligible(f) {
		if ma[q.Name] <= 0 || ma[q.Name] >= mb[q.Name] {
			t.Fatalf("%s: mean %v on the fast server, %v on the slow one", q.Name, ma[q.Name], mb[q.Name])
		}
	}
	if len(sent) != 2 || sent["a POST application/x-www-form-urlencoded gzip=true query=true"] == 0 ||
		sent["b POST application/x-www-form-urlencoded gzip=true query=true"] == 0 {
		t.Fatalf("requests %v: want only form POSTs asking for gzip, on both", sent)
	}
}

// promServer answers every request, after noting it and sleeping delay,
// as Prometheus answers a range query that selects nothing.
func promServer(delay time.Duration, note func(*http.Request)) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note(r)
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
}
