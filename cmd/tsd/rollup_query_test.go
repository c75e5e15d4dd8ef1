package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDaemonRollupQuery runs /api/query on the daemon over rollup cells:
// two days of points flushed at shutdown with their cells, then more
// points in the head after a restart. A 1h-avg query is served by the 1h
// rollup table (showSummary's table) and a 1d-max by the 1d one, each
// with the answer of the same query with rollup_raw, head points
// included.
func TestDaemonRollupQuery(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	day := time.Now().Add(-72 * time.Hour).Truncate(24 * time.Hour).Unix()
	put := func(d *daemon, from, to int) {
		var pts []map[string]any
		for i := from; i < to; i++ { // a point every 5 minutes
			for _, h := range []string{"a", "b"} {
				pts = append(pts, map[string]any{"metric": "roll.q", "timestamp": day + int64(i)*300, "value": float64(i%13) + 0.25,
					"tags": map[string]string{"host": h}})
			}
		}
		d.putJSON(t, pts)
	}
	put(d, 0, 2*288)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startDaemon(t, "--data", data)
	defer d.Stop(t)
	put(d, 2*288, 2*288+30) // unflushed: read raw beside the cells
	end := day + 3*86400
	for _, c := range []struct{ m, table string }{
		{"sum:1h-avg:roll.q{host=*}", "tsdb-rollup-1h"},
		{"max:1d-max:roll.q{host=*}", "tsdb-rollup-1d"},
	} {
		got := rollupQueryBody(t, d, c.m, day, end, true)
		if !strings.Contains(got, `"table":"`+c.table+`"`) {
			t.Errorf("%s: not served by %s: %.600s", c.m, c.table, got)
		}
		raw := strings.Replace(c.m, ":", ":rollup_raw:", 1)
		want := rollupQueryBody(t, d, raw, day, end, false)
		if err := sameDPS(rollupQueryBody(t, d, c.m, day, end, false), want); err != nil {
			t.Errorf("%s: %v", c.m, err)
		}
	}
	promRollupQueries(t, d, day, end)
}

// promRollupQueries runs PromQL range queries the rollup cells serve on
// the daemon of TestDaemonRollupQuery, each against the same query with
// stats=all (which the API never pushes down, so it reads raw points),
// then checks that /api/stats counts them under the 1h and 1d tables.
func promRollupQueries(t *testing.T, d *daemon, day, end int64) {
	t.Helper()
	sel := `{__name__="roll.q"}`
	for _, c := range []struct {
		expr        string
		start, step int64
	}{
		{"sum by (host) (avg_over_time(" + sel + "[1h]))", day + 3600, 3600},
		{"max by (host) (max_over_time(" + sel + "[1h]))", day + 3600, 3600},
		{"sum_over_time(" + sel + "[1d])", day + 86400, 86400},
		{"min_over_time(" + sel + "[2h])", day + 7200, 7200},
	} {
		path := fmt.Sprintf("/api/v1/query_range?query=%s&start=%d&end=%d&step=%d", url.QueryEscape(c.expr), c.start, end, c.step)
		got, want := promValues(t, d, path), promValues(t, d, path+"&stats=all")
		if len(want) == 0 {
			t.Errorf("%s: no result", c.expr)
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Abs(w) {
				t.Errorf("%s at %s: %v, raw %v", c.expr, k, g, w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d values, raw %d", c.expr, len(got), len(want))
		}
	}
	code, body := d.Get(t, "/api/stats")
	for _, table := range []string{"tsdb-rollup-1h", "tsdb-rollup-1d"} {
		if code != http.StatusOK || !strings.Contains(body, `"metric":"tsd.promql.rollup.selects"`) || !strings.Contains(body, `"table":"`+table+`"`) {
			t.Errorf("/api/stats: %d, no tsd.promql.rollup.selects of %s: %.2000s", code, table, body)
		}
	}
}

// promValues runs a PromQL range query and returns its values by series
// and time.
func promValues(t *testing.T, d *daemon, path string) map[string]float64 {
	t.Helper()
	code, body := d.Get(t, path)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	var res struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	out := map[string]float64{}
	for _, s := range res.Data.Result {
		for _, v := range s.Values {
			f, err := strconv.ParseFloat(v[1].(string), 64)
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%v@%v", s.Metric, v[0])] = f
		}
	}
	return out
}

func rollupQueryBody(t *testing.T, d *daemon, m string, start, end int64, summary bool) string {
	t.Helper()
	path := fmt.Sprintf("/api/query?start=%d&end=%d&m=%s", start, end, m)
	if summary {
		path += "&show_summary"
	}
	code, body := d.Get(t, path)
	if code != http.StatusOK {
		t.Fatalf("query %s: %d %s", m, code, body)
	}
	return body
}

// sameDPS compares two answers' dps within 1e-9 relative.
func sameDPS(got, want string) error {
	type res struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	var g, w []res
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return err
	}
	if len(g) != len(w) || len(w) == 0 {
		return fmt.Errorf("%d results, raw %d", len(g), len(w))
	}
	for i := range w {
		if len(g[i].DPS) != len(w[i].DPS) || len(w[i].DPS) == 0 {
			return fmt.Errorf("result %d: %d points, raw %d", i, len(g[i].DPS), len(w[i].DPS))
		}
		for ts, v := range w[i].DPS {
			if gv, ok := g[i].DPS[ts]; !ok || math.Abs(gv-v) > 1e-9*math.Abs(v) {
				return fmt.Errorf("result %d at %s: %v, raw %v", i, ts, gv, v)
			}
		}
	}
	return nil
}
