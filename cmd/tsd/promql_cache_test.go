package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDaemonPromQLAnswerCache: the daemon gives a kept PromQL answer
// again only while nothing it read has changed. A point written inside a
// range function's window before the range's start, a delete and a
// rename each make the next answer new; a point written elsewhere keeps
// it. The hits are read from /api/stats.
func TestDaemonPromQLAnswerCache(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.http.query.allow_delete=true")
	const base = 1356998400 // an hour's start
	var pts []string
	for _, m := range []string{"cache.m", "cache.gone"} {
		for i := range 120 {
			pts = append(pts, fmt.Sprintf(`{"metric":%q,"timestamp":%d,"value":%d,"tags":{"host":"a"}}`, m, base+60*i, i))
		}
	}
	if code, body := d.post(t, "/api/put", "application/json", "["+strings.Join(pts, ",")+"]"); code != 204 {
		t.Fatal(code, body)
	}
	// The second hour at a minute's step (61 steps), each step the max of
	// the hour before it: the first window starts in the first hour.
	ask := func(metric string) string {
		t.Helper()
		q := url.QueryEscape(fmt.Sprintf(`max_over_time({__name__=%q}[1h])`, metric))
		code, body := d.Get(t, fmt.Sprintf("/api/v1/query_range?start=%d&end=%d&step=60&query=%s", base+3600, base+7200, q))
		if code != 200 {
			t.Fatal(code, body)
		}
		return body
	}
	hits := func() int64 {
		t.Helper()
		return d.stat(t, "tsd.promql.cache.hits")
	}
	first := ask("cache.m")
	if again := ask("cache.m"); again != first || hits() != 1 {
		t.Fatalf("asked twice: hits %v, answers equal %v", hits(), again == first)
	}
	put := func(metric string, ts int64, v int) {
		t.Helper()
		body := fmt.Sprintf(`{"metric":%q,"timestamp":%d,"value":%d,"tags":{"host":"a"}}`, metric, ts, v)
		if code, b := d.post(t, "/api/put", "application/json", body); code != 204 {
			t.Fatal(code, b)
		}
	}
	put("cache.m", base+10*3600, 5) // hours after what the query reads
	if ask("cache.m") != first || hits() != 2 {
		t.Fatal("a point outside the span read made the kept answer stale")
	}
	put("cache.m", base+1800+30, 1_000_000) // in the first window, before the range
	if got := ask("cache.m"); !strings.Contains(got, `"1000000"`) {
		t.Fatalf("a point in a window before the start is not in the answer: %.300s", got)
	}

	gone := ask("cache.gone")
	ask("cache.gone")
	del := fmt.Sprintf(`{"start":%d,"end":%d,"delete":true,"queries":[{"metric":"cache.gone","aggregator":"sum"}]}`, base, base+7200)
	if code, body := d.post(t, "/api/query", "application/json", del); code != 200 {
		t.Fatal(code, body)
	}
	if got := ask("cache.gone"); got == gone || strings.Contains(got, `"host":"a"`) {
		t.Fatalf("deleted points are still answered: %.300s", got)
	}

	before := ask("cache.m")
	if code, body := d.post(t, "/api/uid/rename", "application/json", `{"metric":"cache.m","name":"cache.renamed"}`); code != 200 {
		t.Fatal(code, body)
	}
	if got := ask("cache.m"); got == before || strings.Contains(got, `"host":"a"`) {
		t.Fatalf("a renamed metric is still answered under its old name: %.300s", got)
	}
}

// TestDaemonTrustedRowsSeeFlushes: the query reader answers a row it
// read before without reading it again while its hour is unwritten
// (query/read, trust.go); a point written into a stored hour and then
// flushed by the background flusher (a second's grace) must still be in
// the answer, which it would not be if the flush did not mark its hour.
func TestDaemonTrustedRowsSeeFlushes(t *testing.T) {
	t.Parallel() // most of it waits for the background flusher
	// Entries from the heap: a row is admitted on the read the policy
	// says, not once the reserve's filler has made room (read's
	// TestReserveCarves covers the reserve).
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.storage.flush.grace=1s", "--tsd.query.row_cache.reserve=-1")
	const base = 1356998400
	var pts []string
	for h := range 20 { // one series of twenty is read by Gets, not a scan
		for i := range 60 {
			pts = append(pts, fmt.Sprintf(`{"metric":"trust.m","timestamp":%d,"value":%d,"tags":{"host":"h%d"}}`, base+60*i, i, h))
		}
	}
	put := func(body string) {
		t.Helper()
		if code, b := d.post(t, "/api/put", "application/json", body); code != 204 {
			t.Fatal(code, b)
		}
	}
	compact := func() {
		t.Helper()
		if code, b := d.post(t, "/api/compact", "application/json", ""); code != 200 {
			t.Fatal(code, b)
		}
	}
	count := func() string {
		t.Helper()
		q := url.QueryEscape(`count_over_time({__name__="trust.m",host="h0"}[1h])`)
		code, body := d.Get(t, fmt.Sprintf("/api/v1/query?time=%d&query=%s", base+3599, q))
		if code != 200 {
			t.Fatal(code, body)
		}
		i := strings.LastIndex(body, `,"`)
		return strings.Trim(body[i+1:], `"]}`)
	}
	put("[" + strings.Join(pts, ",") + "]")
	compact()
	for range 4 {
		if n := count(); n != "60" {
			t.Fatalf("%s points, want 60", n)
		}
	}
	if d.stat(t, "tsd.query.rowcache.trusted") == 0 {
		t.Fatal("no row was answered without a read")
	}
	put(fmt.Sprintf(`{"metric":"trust.m","timestamp":%d,"value":7,"tags":{"host":"h0"}}`, base+30))
	for range 3 {
		if n := count(); n != "61" {
			t.Fatalf("%s points with one in the head, want 61", n)
		}
	}
	flushed := d.stat(t, "tsd.flush.points")
	deadline := time.Now().Add(20 * time.Second)
	for d.stat(t, "tsd.flush.points") == flushed {
		if time.Now().After(deadline) {
			t.Fatal("the background flusher wrote nothing in 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := count(); n != "61" {
		t.Fatalf("%s points once the head's point is flushed into the stored row, want 61", n)
	}
}

// TestDaemonAnswersOutliveCompact: /api/compact flushes the head into the
// store, with its rollup cells, and compacts it; the points keep their
// values, so a kept answer is given again, and every answer computed
// afresh afterwards (from stored rows and rollup cells instead of head
// rows) is the one computed before, byte for byte. Float values, so that
// a sum folded in another order would show.
func TestDaemonAnswersOutliveCompact(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.rollups.enable=true")
	const base = 1356998400 // a day's start
	var pts []string
	for h := range 3 {
		for i := range 26 * 60 { // a point a minute for 26 hours
			v := fmt.Sprintf("%.17g", float64(i%97)*0.1+float64(h)/3)
			if i%5 == 0 {
				v = fmt.Sprint(i % 13) // integers among them
			}
			pts = append(pts, fmt.Sprintf(`{"metric":"keep.m","timestamp":%d,"value":%s,"tags":{"host":"h%d"}}`, base+60*i+7, v, h))
		}
	}
	for i := 0; i < len(pts); i += 2000 {
		if code, body := d.post(t, "/api/put", "application/json", "["+strings.Join(pts[i:min(i+2000, len(pts))], ",")+"]"); code != 204 {
			t.Fatal(code, body)
		}
	}
	ask := func(expr string, start, end, step int) string {
		t.Helper()
		code, body := d.Get(t, fmt.Sprintf("/api/v1/query_range?start=%d&end=%d&step=%d&query=%s", start, end, step, url.QueryEscape(expr)))
		if code != 200 {
			t.Fatal(code, body)
		}
		return body
	}
	kept := func() string { return ask(`max_over_time({__name__="keep.m"}[10m])`, base+3600, base+7200, 60) }
	// Hour-aligned windows of an hour and of a day, which rollup cells
	// answer once they are stored, and unaligned ones: under 50 steps,
	// so never kept.
	fresh := []string{
		`sum_over_time({__name__="keep.m"}[1h])`, `avg_over_time({__name__="keep.m"}[1h])`, `max_over_time({__name__="keep.m"}[1h])`,
		`count_over_time({__name__="keep.m"}[1h])`, `sum(sum_over_time({__name__="keep.m"}[1h]))`, `avg_over_time({__name__="keep.m"}[1d])`,
		`sum_over_time({__name__="keep.m"}[1d])`, `rate({__name__="keep.m"}[1h])`, `avg_over_time({__name__="keep.m"}[37m])`,
	}
	freshAll := func() []string {
		var out []string
		for _, e := range fresh {
			out = append(out, ask(e, base+3600, base+26*3600, 3600))
		}
		return out
	}
	first := kept()
	before := freshAll()
	if code, body := d.post(t, "/api/compact", "application/json", ""); code != 200 {
		t.Fatal(code, body)
	}
	hits := d.stat(t, "tsd.promql.cache.hits")
	if got := kept(); got != first || d.stat(t, "tsd.promql.cache.hits") != hits+1 {
		t.Fatalf("the kept answer was not given after /api/compact (hits %d, then %d)", hits, d.stat(t, "tsd.promql.cache.hits"))
	}
	if d.stat(t, "tsd.flush.points") == 0 {
		t.Fatal("/api/compact flushed no point: the answers below read the head as before")
	}
	selects := d.stat(t, "tsd.promql.rollup.selects")
	after := freshAll()
	if d.stat(t, "tsd.promql.rollup.selects") == selects {
		t.Fatal("no answer after /api/compact came from rollup cells")
	}
	for i, got := range after {
		if got != before[i] {
			t.Errorf("%s: the answer changed when the points moved to the store:\nbefore %.400s\nafter  %.400s", fresh[i], before[i], got)
		}
	}
}
