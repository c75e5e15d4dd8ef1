package grafana

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The OpenTSDB fixtures' data: 180 points 10 s apart from base, 45
// minutes into an hour two to three hours before the test starts, so
// every series spans two hourly rows and "now" ends every range; base is
// aligned to 5 minutes, which every downsampling interval divides.
const (
	otsPoints = 180
	otsStep   = 10
)

// otsData is what the test writes and the times its fixtures use.
type otsData struct {
	base    int64     // first point, Unix seconds
	now     time.Time // the test's "now"
	startMs int64     // dashboard range "now-6h" as the browser sends it: ms, unaligned
	cpu     []otsSeries
	octets  []otsSeries
	// The annotations written.
	seriesNote, globalNote, oldNote otsNote
}

// newOTSData builds the series: sys.cpu.user for web01 (ints i), web02
// (0.5i+0.25) in dc lga and web03 (ints 100-i) in dc sjc, written over
// /api/put; if.octets.in counters for web01 (50i, reset at i=30 to
// 50(i-30)+7) and web02 (20i) in dc lga, written over telnet.
func newOTSData(now time.Time) *otsData {
	h := now.Unix() - 3*3600
	d := &otsData{base: h - h%3600 + 2700, now: now, startMs: now.Add(-6*time.Hour).UnixMilli() + 123}
	gen := func(metric, host, dc string, ints bool, f func(i int) float64) otsSeries {
		s := otsSeries{metric: metric, tags: map[string]string{"host": host, "dc": dc}, ints: ints}
		for i := range otsPoints {
			s.pts = append(s.pts, otsPoint{d.base + int64(i*otsStep), f(i)})
		}
		return s
	}
	d.cpu = []otsSeries{
		gen("sys.cpu.user", "web01", "lga", true, func(i int) float64 { return float64(i) }),
		gen("sys.cpu.user", "web02", "lga", false, func(i int) float64 { return 0.5*float64(i) + 0.25 }),
		gen("sys.cpu.user", "web03", "sjc", true, func(i int) float64 { return float64(100 - i) }),
	}
	d.octets = []otsSeries{
		gen("if.octets.in", "web01", "lga", true, func(i int) float64 {
			if i < 30 {
				return float64(50 * i)
			}
			return float64(50*(i-30) + 7)
		}),
		gen("if.octets.in", "web02", "lga", true, func(i int) float64 { return float64(20 * i) }),
	}
	d.seriesNote = otsNote{Description: "deploy web01", StartTime: float64(d.base + 125)}
	d.globalNote = otsNote{Description: "maintenance window", StartTime: float64(d.base + 300)}
	d.oldNote = otsNote{Description: "old outage", StartTime: float64(d.base - 3*86400)}
	return d
}

// span is the absolute range of the fixtures that have one: 5 minutes
// before the first point to 5 minutes after the last.
func (d *otsData) span() (start, end int64) {
	return d.base - 300, d.base + otsPoints*otsStep + 300
}

// vars are the fixtures' placeholders for a range [start, end] seconds.
func (d *otsData) vars(start, end int64) map[string]string {
	return map[string]string{
		"${START_MS}": strconv.FormatInt(start*1000, 10),
		"${START}":    strconv.FormatInt(start, 10),
		"${END}":      strconv.FormatInt(end, 10),
		"${END_MS}":   strconv.FormatInt(end*1000, 10),
	}
}

// fixture reads testdata/name with its placeholders replaced.
func fixture(t *testing.T, name string, vars map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, k, v)
	}
	s := strings.TrimSpace(strings.NewReplacer(pairs...).Replace(string(b)))
	if strings.Contains(s, "${") {
		t.Fatalf("%s: placeholder left in %s", name, s)
	}
	return s
}

// metadataRequests reads testdata/opentsdb_metadata_requests.txt: name to
// path and query.
func metadataRequests(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/opentsdb_metadata_requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, path, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("metadata request line %q has no tab", line)
		}
		m[name] = path
	}
	return m
}

// load writes sys.cpu.user over /api/put and if.octets.in over telnet,
// waits until the telnet points answer a query, then writes the
// annotations.
func (d *otsData) load(t *testing.T, addr string) {
	t.Helper()
	var pts []map[string]any
	for _, s := range d.cpu {
		for _, p := range s.pts {
			var v any = p.V
			if s.ints {
				v = int64(p.V)
			}
			pts = append(pts, map[string]any{"metric": s.metric, "timestamp": p.T, "value": v, "tags": s.tags})
		}
	}
	body, _ := json.Marshal(pts)
	if code, b := send(t, "POST", "http://"+addr+"/api/put", "application/json", body, nil); code != 204 {
		t.Fatalf("/api/put = %d %s", code, b)
	}
	d.telnet(t, addr)
	d.waitTelnet(t, addr)
	d.annotate(t, addr)
}

// telnet sends the counters as tcollector does, then "version", and reads
// the answer so every put line has been read by the server.
func (d *otsData) telnet(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := bufio.NewWriter(c)
	for _, s := range d.octets {
		for _, p := range s.pts {
			fmt.Fprintf(w, "put %s %d %d host=%s dc=%s\n", s.metric, p.T, int64(p.V), s.tags["host"], s.tags["dc"])
		}
	}
	w.WriteString("version\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "put:") {
		t.Fatalf("telnet: %q %v", line, err)
	}
}

// waitTelnet polls until all telnet points are readable (a telnet
// connection commits its puts asynchronously).
func (d *otsData) waitTelnet(t *testing.T, addr string) {
	t.Helper()
	q := url.Values{"start": {strconv.FormatInt(d.base, 10)}, "end": {strconv.FormatInt(d.base+otsPoints*otsStep, 10)},
		"m": {"sum:if.octets.in{host=*}"}, "arrays": {""}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := send(t, "GET", "http://"+addr+"/api/query?"+q.Encode(), "", nil, nil)
		var rs []struct{ DPS [][]any }
		n := 0
		if code == 200 && json.Unmarshal([]byte(body), &rs) == nil {
			for _, r := range rs {
				n += len(r.DPS)
			}
		}
		if n == len(d.octets)*otsPoints {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("telnet points not readable after 10s: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// annotate writes a note on sys.cpu.user{host=web01,dc=lga} (its tsuid
// from /api/search/lookup), a global note in the fixtures' ranges and one
// three days before them.
func (d *otsData) annotate(t *testing.T, addr string) {
	t.Helper()
	code, body := send(t, "GET", "http://"+addr+"/api/search/lookup?m="+url.QueryEscape("sys.cpu.user{host=web01}"), "", nil, nil)
	var lk struct{ Results []struct{ TSUID string } }
	if err := json.Unmarshal([]byte(body), &lk); code != 200 || err != nil || len(lk.Results) != 1 || lk.Results[0].TSUID == "" {
		t.Fatalf("lookup web01 = %d %s (%v)", code, body, err)
	}
	d.seriesNote.TSUID = lk.Results[0].TSUID
	notes := []string{
		fmt.Sprintf(`{"tsuid":%q,"startTime":%d,"description":%q,"notes":"v2.1"}`, d.seriesNote.TSUID, int64(d.seriesNote.StartTime), d.seriesNote.Description),
		fmt.Sprintf(`{"startTime":%d,"endTime":%d,"description":%q}`, int64(d.globalNote.StartTime), int64(d.globalNote.StartTime)+100, d.globalNote.Description),
		fmt.Sprintf(`{"startTime":%d,"description":%q}`, int64(d.oldNote.StartTime), d.oldNote.Description),
	}
	for _, n := range notes {
		if code, b := send(t, "POST", "http://"+addr+"/api/annotation", "application/json", []byte(n), nil); code != 200 {
			t.Fatalf("POST /api/annotation %s = %d %s", n, code, b)
		}
	}
}

// members returns the series of ss whose tags match all of want.
func members(ss []otsSeries, want map[string]string) []otsSeries {
	var out []otsSeries
	for _, s := range ss {
		ok := true
		for k, v := range want {
			ok = ok && s.tags[k] == v
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}
