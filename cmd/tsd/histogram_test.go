package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/storage/pebble"
)

// histGroup is one result series of a histogram query.
type histGroup struct {
	Metric        string             `json:"metric"`
	Tags          map[string]string  `json:"tags"`
	AggregateTags []string           `json:"aggregateTags"`
	DPS           map[string]float64 `json:"dps"`
}

// histQuery runs GET /api/query with m and returns its groups.
func histQuery(t *testing.T, d *daemon, m string) []histGroup {
	t.Helper()
	path := "/api/query?start=1356998400&end=1356998520&m=" + url.QueryEscape(m)
	code, body := d.Get(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, code, body)
	}
	var gs []histGroup
	if err := json.Unmarshal([]byte(body), &gs); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return gs
}

// summary returns each group as "metric tags aggregateTags dps".
func histSummary(gs []histGroup) []string {
	var out []string
	for _, g := range gs {
		tags, _ := json.Marshal(g.Tags)
		agg, _ := json.Marshal(g.AggregateTags)
		dps, _ := json.Marshal(g.DPS)
		out = append(out, g.Metric+" "+string(tags)+" "+string(agg)+" "+string(dps))
	}
	return out
}

// TestDaemonHistograms writes histograms through telnet and
// /api/histogram into a store in OpenTSDB's format and checks the stored
// bytes against OpenTSDB 2.4's (HistogramDataPoint.PREFIX 06 + offset,
// codec id 0 + SimpleHistogram's Kryo bytes), OpenTSDB's refusals and
// messages (HistogramDataPointRpc, HistogramPojo.validate), and the
// percentiles, buckets, cross-series sums and downsampling /api/query
// answers, each computed by hand with SimpleHistogram.percentile: the
// first bucket whose running share of the counts reaches p, answered
// with its midpoint.
func TestDaemonHistograms(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.storage.format=opentsdb", "--tsd.storage.salt.width=0")
	got := telnetSession(t, d.Addr,
		// web01 at 1356998400: [1,2) 5, [2,3) 5, [3,4) 5, overflow 2.
		"histogram hist.lat 1356998400 1,2=5:2,3=5:3,4=5:o=2 host=web01",
		// web01 at +60 s: codec 0's bytes without the id, [1,2) 10.
		"histogram hist.lat 1356998460 0 AAE/gAAAQAAAAAoAAA== host=web01",
		"histogram hist.lat 1356998400",
		"histogram hist.lat 1356998400 1,2=x host=web01",
		"histogram hist.lat 1356998400 7 AAE/gAAAQAAAAAoAAA== host=web01",
		"histogram hist.lat 1356998400 0 AAAA host=web01",
		"histogram hist.lat 1356998400 1=5 host=web01",
		"histogram hist.lat 13569984x0 1,2=5 host=web01",
	)
	equalLines(t, "telnet replies", got[:len(got)-2], []string{
		"histogram: illegal argument: not enough arguments (need least 5, got 2)",
		`histogram: HBase error: For input string: "x"`,
		"histogram: HBase error: No codec found mapped to ID 7",
		`histogram: HBase error: Byte array shorter than 6 bytes detected: "\x00\x00\x00"`,
		"histogram: HBase error: Improperly formatted bounds: 1=5",
		"histogram: invalid value: Invalid character 'x' in 13569984x0",
	})
	body := `[{"metric":"hist.lat","timestamp":1356998400,"tags":{"host":"web02"},"buckets":{"1,2":30}},
	{"metric":"hist.ms","timestamp":1356998401000,"tags":{"host":"web02"},"buckets":{"0,10":1},"underflow":3},
	{"metric":"hist.lat","timestamp":1356998400,"tags":{"host":"web03"}},
	{"metric":"hist.lat","timestamp":1356998400,"tags":{"host":"web03"},"value":"AAAA","id":300},
	{"metric":"","timestamp":1356998400,"tags":{"host":"web03"},"buckets":{"1,2":1}},
	{"metric":"hist.lat","timestamp":1356998400,"tags":{"host":"web03"},"buckets":{"1-2":5}},
	{"metric":"hist.lat","timestamp":1356998400,"tags":{"host":"web03"},"buckets":{"1,y":5}}]`
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/histogram?details", []byte(body), false)
	if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(out, `{"success":2,"failed":5,"errors":[`) {
		t.Fatalf("/api/histogram = %d %s", resp.StatusCode, out)
	}
	for _, msg := range []string{
		`"error":"Histogram buckets cannot be null or empty if 'value' is empty."`,
		`"error":"Invalid type. Must be from 0 to 255."`,
		`"error":"Metric name was empty"`,
		`"error":"Unable to parse bucket bounds: 1-2"`,
		`"error":"Unable to parse value to a number"`,
	} {
		if !strings.Contains(out, msg) {
			t.Errorf("/api/histogram details lack %s:\n%s", msg, out)
		}
	}
	// Refused histograms are logged as refused puts are (obs_test.go).
	d.waitLog(t, "the refused histograms", `level=WARN`, `msg="points refused"`, `kind=ingest.refused.histogram`,
		`client=127.0.0.1`, `protocol=histogram`, `points=5`,
		`first_error="Histogram buckets cannot be null or empty if 'value' is empty."`)
	if resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/histogram", []byte(`{"metric":"hist.lat","timestamp":1356998520,"tags":{"host":"web04"},"buckets":{"1,2":1}}`), false); resp.StatusCode != http.StatusNoContent {
		t.Errorf("one object = %d %s", resp.StatusCode, out)
	}
	if code, out := d.Get(t, "/api/histogram"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/histogram = %d %s", code, out)
	}

	for _, c := range []struct {
		m    string
		want []string
	}{
		// web01: 5,5,5 of 15: 33% < 50 <= 67% in [2,3): 2.5; 99 only at
		// 100% in [3,4): 3.5. At +60 s all 10 in [1,2): 1.5.
		{"sum:percentiles[99,50]:hist.lat{host=web01}", []string{
			`hist.lat_pct_50.0 {"host":"web01"} [] {"1356998400":2.5,"1356998460":1.5}`,
			`hist.lat_pct_99.0 {"host":"web01"} [] {"1356998400":3.5,"1356998460":1.5}`,
		}},
		// Summed with web02's 30 in [1,2): 35,5,5 of 45: 77.8% < 80 <=
		// 88.9% in [2,3): 2.5 (web01 alone 3.5, web02 alone 1.5).
		{"sum:percentiles[80]:hist.lat{}{host=web01|web02}", []string{
			`hist.lat_pct_80.0 {} ["host"] {"1356998400":2.5,"1356998460":1.5}`,
		}},
		// none: each series alone.
		{"none:percentiles[80]:hist.lat{host=web01|web02}", []string{
			`hist.lat_pct_80.0 {"host":"web01"} [] {"1356998400":3.5,"1356998460":1.5}`,
			`hist.lat_pct_80.0 {"host":"web02"} [] {"1356998400":1.5}`,
		}},
		// 2m-sum: both web01 histograms in the bucket at 1356998400:
		// 15,5,5 of 25: 60% >= 50 in [1,2): 1.5.
		{"sum:2m-sum:percentiles[50]:hist.lat{host=web01}", []string{
			`hist.lat_pct_50.0 {"host":"web01"} [] {"1356998400":1.5}`,
		}},
		// Buckets of the first histogram, then each one's counts.
		{"sum:show-histogram-buckets:hist.lat{host=web01}", []string{
			`hist.lat_UNDERFLOW {"host":"web01"} [] {"1356998400":0,"1356998460":0}`,
			`hist.lat_1.0_2.0 {"host":"web01"} [] {"1356998400":5,"1356998460":10}`,
			`hist.lat_2.0_3.0 {"host":"web01"} [] {"1356998400":5,"1356998460":0}`,
			`hist.lat_3.0_4.0 {"host":"web01"} [] {"1356998400":5,"1356998460":0}`,
			`hist.lat_OVERFLOW {"host":"web01"} [] {"1356998400":2,"1356998460":0}`,
		}},
		// A percentile outside [1, 100] is SimpleHistogram's -1.
		{"sum:percentiles[0.5]:hist.ms", []string{`hist.ms_pct_0.5 {"host":"web02"} [] {"1356998401":-1}`}},
		// Points are not histograms: a plain query of the metric finds none.
		{"sum:hist.lat{host=web01}", nil},
	} {
		if got := histSummary(histQuery(t, d, c.m)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("m=%s:\n%s\nwant\n%s", c.m, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	// POST: percentiles and showHistogramBuckets as JSON fields.
	q := `{"start":1356998400,"end":1356998520,"queries":[{"aggregator":"sum","metric":"hist.lat","percentiles":[80],` +
		`"filters":[{"type":"literal_or","tagk":"host","filter":"web01|web02","groupBy":false}]}]}`
	resp, out = post(t, http.MethodPost, "http://"+d.Addr+"/api/query", []byte(q), false)
	var posted []histGroup
	if err := json.Unmarshal([]byte(out), &posted); resp.StatusCode != http.StatusOK || err != nil ||
		!reflect.DeepEqual(histSummary(posted), []string{`hist.lat_pct_80.0 {} ["host"] {"1356998400":2.5,"1356998460":1.5}`}) {
		t.Errorf("POST /api/query = %d %s", resp.StatusCode, out)
	}
	var stats []struct{ Metric, Value string }
	if code, out := d.Get(t, "/api/stats"); code != http.StatusOK || json.Unmarshal([]byte(out), &stats) != nil {
		t.Fatalf("/api/stats = %d %s", code, out)
	}
	stored := "missing"
	for _, s := range stats {
		if s.Metric == "tsd.histograms.stored" {
			stored = s.Value
		}
	}
	if stored != "5" { // web01 twice, web02, hist.ms, web04
		t.Errorf("tsd.histograms.stored = %s, want 5", stored)
	}
	if code, out := d.Get(t, "/api/query?start=1356998400&m=avg:percentiles[50]:hist.lat"); code != http.StatusBadRequest ||
		!strings.Contains(out, "Only NONE or SUM aggregation function supported for histogram query") {
		t.Errorf("avg histogram query = %d %s", code, out)
	}

	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// UIDs in assignment order: hist.lat, host, web01 000001; web02,
	// hist.ms 000002; web04 000003. Row base 1356998400 = 50E22700.
	want := []string{
		// 06 + 0 s; id 00, 3 buckets: 1.0f 2.0f n=5, 2.0f 3.0f 5, 3.0f
		// 4.0f 5, underflow 0, overflow 2.
		"00000150e22700000001000001 060000=0000033f8000004000000005400000004040000005404000004080000005" + "0002",
		// 06 + 60 s (003C): the telnet base64 bytes with id 0 in front.
		"00000150e22700000001000001 06003c=00" + "00013f800000400000000a0000",
		// web02: [1,2) 30 (1E).
		"00000150e22700000001000002 060000=0000013f80000040000000" + "1e0000",
		// web04 at +120 s (0078).
		"00000150e22700000001000003 060078=0000013f80000040000000" + "010000",
		// hist.ms at 1356998401000 ms: a millisecond timestamp on a whole
		// second keeps the 4-byte form, raw ms 1000 (000003E8); [0,10) 1,
		// underflow 3.
		"00000250e22700000001000002 06000003e8=00000100000000412000000103" + "00",
	}
	if got := cellsOf(t, db, "tsdb"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("data table:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDaemonHistogramsSurvive: in tsd's dense format, histograms live
// as OpenTSDB's cells beside the dense columns of their series' rows. A
// histogram acknowledged (telnet: before version answers; HTTP: 204) is
// in the store already, so it survives kill -9 with nothing to replay;
// the flush at a clean stop, which writes the row's dense column, and
// the compaction that folds the points' columns, leave it untouched, and
// the points beside it read as before.
func TestDaemonHistogramsSurvive(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	telnetSession(t, d.Addr,
		"put hist.lat 1356998400 7 host=web01",
		"histogram hist.lat 1356998400 1,2=5:2,3=5:3,4=5:o=2 host=web01",
		"put hist.lat 1356998460 8 host=web01",
	)
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/histogram",
		[]byte(`{"metric":"hist.lat","timestamp":1356998460,"tags":{"host":"web01"},"buckets":{"1,2":10}}`), false)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("/api/histogram = %d %s", resp.StatusCode, out)
	}
	d.Kill()
	wantPct := []string{`hist.lat_pct_50.0 {"host":"web01"} [] {"1356998400":2.5,"1356998460":1.5}`}
	wantPts := []string{`hist.lat {"host":"web01"} [] {"1356998400":7,"1356998460":8}`}
	for round := 0; round < 3; round++ {
		d = startDaemon(t, "--data", data)
		if got := histSummary(histQuery(t, d, "sum:percentiles[50]:hist.lat")); !reflect.DeepEqual(got, wantPct) {
			t.Errorf("round %d: percentiles\n%s\nwant\n%s", round, strings.Join(got, "\n"), strings.Join(wantPct, "\n"))
		}
		if got := histSummary(histQuery(t, d, "sum:hist.lat")); !reflect.DeepEqual(got, wantPts) {
			t.Errorf("round %d: points\n%s\nwant\n%s", round, strings.Join(got, "\n"), strings.Join(wantPts, "\n"))
		}
		if round == 0 {
			// A late point for the row, written after its first flush: the
			// row gets a second column, which the compactor folds.
			telnetSession(t, d.Addr, "put hist.lat 1356998430 9 host=web01")
			wantPts = []string{`hist.lat {"host":"web01"} [] {"1356998400":7,"1356998430":9,"1356998460":8}`}
		}
		if err := d.Stop(t); err != nil { // flushes the rows, drains compaction
			t.Fatalf("stop: %v\n%s", err, d.Logs)
		}
	}
	db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var hists, others []string
	for _, c := range cellsOf(t, db, "tsdb") {
		q, _, _ := strings.Cut(strings.Fields(c)[1], "=")
		if strings.HasPrefix(q, "06") && (len(q) == 6 || len(q) == 10) {
			hists = append(hists, q)
		} else {
			others = append(others, q)
		}
	}
	// Two histogram cells, untouched, beside the points' one dense
	// column (80..EF prefix) the compactor folded the late point into.
	if want := []string{"060000", "06003c"}; !reflect.DeepEqual(hists, want) || len(others) != 1 || others[0][0] < '8' {
		t.Errorf("histogram cells %q, want %q; point columns %q, want one dense", hists, want, others)
	}
}

// TestDaemonHistogramsOff: with tsd.core.histograms.config empty,
// /api/histogram answers 503 with OpenTSDB's message whatever the method,
// telnet histogram refuses the line, and a configuration naming a codec
// tsd does not have stops the daemon at start, naming the key.
func TestDaemonHistogramsOff(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.core.histograms.config=")
	const msg = "Histogram storage has not been enabled. Check the 'tsd.core.histograms.config' configuration."
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		resp, out := post(t, method, "http://"+d.Addr+"/api/histogram", []byte(`{"metric":"m","timestamp":1,"buckets":{"1,2":1}}`), false)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(out, msg) {
			t.Errorf("%s /api/histogram = %d %s", method, resp.StatusCode, out)
		}
	}
	got := telnetSession(t, d.Addr, "histogram m 1356998400 1,2=1 host=a")
	equalLines(t, "telnet", got[:len(got)-2], []string{"histogram: illegal argument: " + msg})
	out, code := runTSD(t, "--data", t.TempDir(), `--tsd.core.histograms.config={"com.example.Sketch": 1}`)
	if code == exitOK || !strings.Contains(out, "tsd.core.histograms.config") || !strings.Contains(out, "Unable to find a decoder named 'com.example.Sketch'") {
		t.Errorf("unknown codec: exit %d\n%s", code, out)
	}
}
