package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// preAggPoints writes, through /api/rollup, the pre-aggregates the
// pre-aggregate tests query: preagg.m{dc=x} grouped by sum and by max in
// the default interval (tsdb-preagg), and its sum group rolled up to 1h
// cells (tsdb-rollup-preagg-1h, every aggregator column of each cell).
// t0 is aligned to a day.
func preAggPoints(t *testing.T, d *daemon, t0 int64) {
	t.Helper()
	var pts []map[string]any
	add := func(ts int64, v float64, groupBy, interval, aggregator string) {
		p := map[string]any{"metric": "preagg.m", "timestamp": ts, "value": v, "tags": map[string]string{"dc": "x"}}
		if groupBy != "" {
			p["groupByAggregator"] = groupBy
		}
		if interval != "" {
			p["interval"], p["aggregator"] = interval, aggregator
		}
		pts = append(pts, p)
	}
	add(t0, 10, "sum", "", "")
	add(t0+60, 20, "sum", "", "")
	add(t0+3600, 30, "sum", "", "")
	add(t0, 5, "max", "", "")
	for _, c := range []struct {
		ts                  int64
		sum, count, min, mx float64
	}{{t0, 1000, 4, 100, 600}, {t0 + 3600, 2000, 5, 200, 700}} {
		add(c.ts, c.sum, "sum", "1h", "sum")
		add(c.ts, c.count, "sum", "1h", "count")
		add(c.ts, c.min, "sum", "1h", "min")
		add(c.ts, c.mx, "sum", "1h", "max")
	}
	body, err := json.Marshal(pts)
	if err != nil {
		t.Fatal(err)
	}
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/rollup", body, false)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("/api/rollup: %d %s", resp.StatusCode, out)
	}
}

// dpsOf returns an answer's results as "tags: ts=v ts=v" lines, times
// relative to t0, for exact comparison.
func dpsOf(t *testing.T, body string, t0 int64) []string {
	t.Helper()
	var res []struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%v: %.400s", err, body)
	}
	var out []string
	for _, r := range res {
		b, _ := json.Marshal(r.Tags)
		var ts []int64
		for k := range r.DPS {
			var v int64
			fmt.Sscan(k, &v)
			ts = append(ts, v)
		}
		line := string(b) + ":"
		for _, k := range sortedInts(ts) {
			line += fmt.Sprintf(" +%d=%g", k-t0, r.DPS[fmt.Sprint(k)])
		}
		out = append(out, line)
	}
	return out
}

func sortedInts(v []int64) []int64 {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	return v
}

// TestDaemonPreAggQuery: a literal _aggregate filter routes a sub-query to
// the pre-aggregation tables as OpenTSDB 2.4 does. In TsdbQuery.java,
// configureFromQuery's resolveTagFilters sets pre_aggregate for a
// TagVLiteralOrFilter on tsd.rollups.agg_tag_key whose getFilter() is not
// tsd.rollups.raw_agg_tag_value, and tableToBeScanned then reads
// rollup_query.getRollupInterval().getGroupbyTable() when the downsampler
// picked a rollup interval (transformDownSamplerToRollupQuery, which
// drops the rollup query when the best interval is the default one), else
// the default interval's getGroupbyTable(). The rolled-up pre-aggregate's
// column is the downsampler's function (new RollupQuery(interval,
// downsampler.getFunction(), ...)), avg from sum and count (RollupQuery).
// A raw point put with the same tags (so the same series) lives in the
// data table and must not appear; _aggregate=RAW does not route.
func TestDaemonPreAggQuery(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.rollups.tag_raw=true")
	defer d.Stop(t)
	t0 := time.Now().Add(-72 * time.Hour).Truncate(24 * time.Hour).Unix()
	preAggPoints(t, d, t0)
	// The same series as the sum pre-aggregate, but raw: in tsdb.
	d.putJSON(t, []map[string]any{{"metric": "preagg.m", "timestamp": t0 + 120, "value": 999,
		"tags": map[string]string{"dc": "x", "_aggregate": "SUM"}}})
	// A raw series' externally computed 1h rollup: with tag_raw it is
	// tagged _aggregate=RAW (TSDB.addAggregatePointInternal), in
	// tsdb-rollup-1h.
	rr := fmt.Sprintf(`[{"metric":"preagg.m","timestamp":%d,"value":77,"tags":{"dc":"y"},"interval":"1h","aggregator":"sum"},`+
		`{"metric":"preagg.m","timestamp":%[1]d,"value":1,"tags":{"dc":"y"},"interval":"1h","aggregator":"count"},`+
		`{"metric":"preagg.m","timestamp":%[1]d,"value":77,"tags":{"dc":"y"},"interval":"1h","aggregator":"min"},`+
		`{"metric":"preagg.m","timestamp":%[1]d,"value":77,"tags":{"dc":"y"},"interval":"1h","aggregator":"max"}]`, t0)
	if resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/rollup", []byte(rr), false); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("/api/rollup: %d %s", resp.StatusCode, out)
	}
	end := t0 + 2*3600 - 1
	sumTags := `{"_aggregate":"SUM","dc":"x"}:`
	for _, c := range []struct {
		m, table string
		want     []string
	}{
		// No downsampler: the default interval's pre-aggregation table.
		{"sum:preagg.m{_aggregate=SUM}", "tsdb-preagg", []string{sumTags + " +0=10 +60=20 +3600=30"}},
		{"max:preagg.m{_aggregate=MAX}", "tsdb-preagg", []string{`{"_aggregate":"MAX","dc":"x"}: +0=5`}},
		// A literal_or of several values routes too (its text is not RAW);
		// in the first braces it groups by the key.
		{"sum:preagg.m{_aggregate=SUM|MAX}", "tsdb-preagg", []string{sumTags + " +0=10 +60=20 +3600=30", `{"_aggregate":"MAX","dc":"x"}: +0=5`}},
		// 1m is the default interval: raw pre-aggregates, downsampled.
		{"sum:1m-sum:preagg.m{_aggregate=SUM}", "tsdb-preagg", []string{sumTags + " +0=10 +60=20 +3600=30"}},
		// 1h (and 2h, which 1h divides) picks the 1h interval: its
		// pre-aggregation table, the downsampler's column.
		{"sum:1h-sum:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=1000 +3600=2000"}},
		{"sum:1h-max:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=600 +3600=700"}},
		{"sum:1h-min:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=100 +3600=200"}},
		{"sum:1h-count:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=4 +3600=5"}},
		{"sum:1h-avg:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=250 +3600=400"}},
		{"sum:2h-sum:preagg.m{_aggregate=SUM}", "tsdb-rollup-preagg-1h", []string{sumTags + " +0=3000"}},
		// _aggregate=RAW reads the temporal tables with the filter: the
		// raw series' rollup tagged by tag_raw.
		{"sum:1h-sum:preagg.m{_aggregate=RAW}", "tsdb-rollup-1h", []string{`{"_aggregate":"RAW","dc":"y"}: +0=77`}},
		// Any other filter type does not route: a wildcard reads tsdb,
		// where only the raw point is.
		{"sum:preagg.m{_aggregate=S*}", "tsdb", []string{sumTags + " +120=999"}},
	} {
		body := rollupQueryBody(t, d, c.m, t0, end, false)
		if got := dpsOf(t, body, t0); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.m, got, c.want)
		}
		if sum := rollupQueryBody(t, d, c.m, t0, end, true); !strings.Contains(sum, `"table":"`+c.table+`"`) {
			t.Errorf("%s: summary does not name %s: %.800s", c.m, c.table, sum)
		}
		// showQuery's echo of each result's sub-query ends with its table.
		path := fmt.Sprintf("/api/query?start=%d&end=%d&show_query&m=%s", t0, end, c.m)
		if code, sq := d.Get(t, path); code != http.StatusOK || !strings.Contains(sq, `"preAggregate":false,"table":"`+c.table+`"},"dps"`) {
			t.Errorf("%s: showQuery does not name %s: %d %.800s", c.m, c.table, code, sq)
		}
	}
	// The JSON form: a literal_or filter object, and preAggregate alone.
	for _, c := range []struct{ sub, want string }{
		{`{"metric":"preagg.m","aggregator":"sum","downsample":"1h-sum","filters":[{"type":"literal_or","tagk":"_aggregate","filter":"SUM","groupBy":false}]}`,
			`{"_aggregate":"SUM","dc":"x"}: +0=1000 +3600=2000`},
		{`{"metric":"preagg.m","aggregator":"sum","preAggregate":true,"tags":{"dc":"x"}}`,
			`{"dc":"x"}: +0=15 +60=20 +3600=30`},
	} {
		q := fmt.Sprintf(`{"start":%d,"end":%d,"queries":[%s]}`, t0, end, c.sub)
		resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/query", []byte(q), false)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, out)
		}
		if got := dpsOf(t, out, t0); strings.Join(got, "\n") != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.sub, got, c.want)
		}
	}
}

// TestDaemonPreAggQueryBigtable: the pre-aggregate routing on the
// Bigtable emulator, one query per pre-aggregation table.
func TestDaemonPreAggQueryBigtable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon on the Bigtable emulator")
	}
	t.Parallel() // its own emulator
	d := startBTEmulator(t).daemon(t, t.TempDir())
	defer d.Stop(t)
	t0 := time.Now().Add(-72 * time.Hour).Truncate(24 * time.Hour).Unix()
	preAggPoints(t, d, t0)
	end := t0 + 2*3600 - 1
	for _, c := range []struct{ m, want string }{
		{"sum:preagg.m{_aggregate=SUM}", `{"_aggregate":"SUM","dc":"x"}: +0=10 +60=20 +3600=30`},
		{"sum:1h-avg:preagg.m{_aggregate=SUM}", `{"_aggregate":"SUM","dc":"x"}: +0=250 +3600=400`},
	} {
		got := dpsOf(t, rollupQueryBody(t, d, c.m, t0, end, false), t0)
		if strings.Join(got, "\n") != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.m, got, c.want)
		}
	}
}

// TestDaemonRollupFallback: rollupUsage when the chosen rollup table holds
// nothing for the query, as OpenTSDB 2.4's
// TsdbQuery.FallbackRollupOnEmptyResult answers: ROLLUP_NOFALLBACK
// returns the empty result, ROLLUP_FALLBACK_RAW calls
// transformRollupQueryToDownSampler and scans the raw table, and
// ROLLUP_FALLBACK takes the next of best_match_rollups (raw when it is the
// default interval, else that rollup table with the query's downsampler
// over its cells). fb.raw's points are written with rollups off, so its
// 1h cells are never computed; fb.roll has only 1h cells, written through
// /api/rollup, so its 1d table is empty.
func TestDaemonRollupFallback(t *testing.T) {
	data := t.TempDir()
	t0 := time.Now().Add(-72 * time.Hour).Truncate(24 * time.Hour).Unix()
	d := startDaemon(t, "--data", data, "--tsd.rollups.enable=false")
	var pts []map[string]any
	for i := range 288 { // every 5 minutes of the day
		pts = append(pts, map[string]any{"metric": "fb.raw", "timestamp": t0 + int64(i)*300, "value": 1, "tags": map[string]string{"host": "a"}})
	}
	d.putJSON(t, pts)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	d = startDaemon(t, "--data", data)
	defer d.Stop(t)
	var roll []string
	for _, c := range []struct {
		ts  int64
		sum float64
	}{{t0, 10}, {t0 + 3600, 20}} {
		for _, a := range []struct {
			agg string
			v   float64
		}{{"sum", c.sum}, {"count", 2}, {"min", 1}, {"max", c.sum - 1}} {
			roll = append(roll, fmt.Sprintf(`{"metric":"fb.roll","timestamp":%d,"value":%g,"tags":{"host":"a"},"interval":"1h","aggregator":"%s"}`, c.ts, a.v, a.agg))
		}
	}
	// fb.pre: pre-aggregates of the default interval only (tsdb-preagg).
	roll = append(roll, fmt.Sprintf(`{"metric":"fb.pre","timestamp":%d,"value":3,"tags":{"dc":"x"},"groupByAggregator":"sum"}`, t0),
		fmt.Sprintf(`{"metric":"fb.pre","timestamp":%d,"value":4,"tags":{"dc":"x"},"groupByAggregator":"sum"}`, t0+3600))
	if resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/rollup", []byte("["+strings.Join(roll, ",")+"]"), false); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("/api/rollup: %d %s", resp.StatusCode, out)
	}
	hourly := `{"host":"a"}:`
	for h := range 24 {
		hourly += fmt.Sprintf(" +%d=12", h*3600)
	}
	end := t0 + 86400 - 1
	for _, c := range []struct {
		m, table string
		want     []string
	}{
		{"sum:rollup_nofallback:1h-sum:fb.raw{host=*}", "tsdb-rollup-1h", nil},
		{"sum:rollup_fallback_raw:1h-sum:fb.raw{host=*}", "tsdb", []string{hourly}},
		// best_match_rollups for 1h is [1h, 1m]: 1m is the default, raw.
		{"sum:rollup_fallback:1h-sum:fb.raw{host=*}", "tsdb", []string{hourly}},
		{"sum:rollup_raw:1h-sum:fb.raw{host=*}", "tsdb", []string{hourly}},
		// For 1d: [1d, 1h, 1m]; the 1h cells, downsampled to a day.
		{"sum:rollup_fallback:1d-sum:fb.roll{host=*}", "tsdb-rollup-1h", []string{`{"host":"a"}: +0=30`}},
		{"sum:rollup_fallback:1d-avg:fb.roll{host=*}", "tsdb-rollup-1h", []string{`{"host":"a"}: +0=7.5`}},
		{"sum:rollup_nofallback:1d-sum:fb.roll{host=*}", "tsdb-rollup-1d", nil},
		{"sum:rollup_fallback_raw:1d-sum:fb.roll{host=*}", "tsdb", nil},
		// Pre-aggregates fall back the same way, within the
		// pre-aggregation tables (tableToBeScanned keeps pre_aggregate).
		{"sum:rollup_nofallback:1h-sum:fb.pre{_aggregate=SUM}", "tsdb-rollup-preagg-1h", nil},
		{"sum:rollup_fallback_raw:1h-sum:fb.pre{_aggregate=SUM}", "tsdb-preagg", []string{`{"_aggregate":"SUM","dc":"x"}: +0=3 +3600=4`}},
		{"sum:rollup_fallback:1d-sum:fb.pre{_aggregate=SUM}", "tsdb-preagg", []string{`{"_aggregate":"SUM","dc":"x"}: +0=7`}},
	} {
		body := rollupQueryBody(t, d, c.m, t0, end, false)
		if got := dpsOf(t, body, t0); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.m, got, c.want)
		}
		if sum := rollupQueryBody(t, d, c.m, t0, end, true); !strings.Contains(sum, `"table":"`+c.table+`"`) {
			t.Errorf("%s: summary does not name %s: %.800s", c.m, c.table, sum)
		}
	}
}
