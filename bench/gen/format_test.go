package gen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// allPoints returns every point of a small dataset.
func allPoints(t *testing.T, cfg Config) (*Gen, []Point) {
	g := mustNew(t, cfg)
	pts := make([]Point, g.NumPoints())
	for i := range pts {
		if !g.Next(&pts[i]) {
			t.Fatalf("ran out at %d", i)
		}
	}
	return g, pts
}

var smallCfgs = []Config{
	{Hosts: 3, Span: 2 * time.Minute},
	{Hosts: 3, Span: 2 * time.Minute, Values: ValuesFloat},
	{Hosts: 2, Span: time.Minute, Shape: ShapeCounters},
	{Hosts: 7, Span: time.Minute, Shape: ShapeHighCard},
}

func TestTelnetFields(t *testing.T) {
	g, pts := allPoints(t, Config{Hosts: 2, Span: time.Minute, Values: ValuesFloat, Interval: 1500 * time.Millisecond})
	for i := range pts {
		p := &pts[i]
		f := strings.Fields(string(g.AppendPut(nil, p)))
		if len(f) != 14 || f[0] != "put" || f[1] != g.Metrics()[p.Metric].Name || f[3] != string(p.Text) {
			t.Fatalf("line %q", f)
		}
		ts, _ := strconv.ParseInt(f[2], 10, 64)
		if (p.T%1000 == 0 && ts*1000 != p.T) || (p.T%1000 != 0 && ts != p.T) {
			t.Fatalf("timestamp %s for %d ms", f[2], p.T)
		}
		if f[4] != "hostname=host_"+strconv.Itoa(p.Host) {
			t.Fatalf("first tag %q", f[4])
		}
	}
}

func TestJSONParsesBack(t *testing.T) {
	for _, cfg := range smallCfgs {
		g, pts := allPoints(t, cfg)
		var got []struct {
			Metric    string            `json:"metric"`
			Timestamp int64             `json:"timestamp"`
			Value     json.Number       `json:"value"`
			Tags      map[string]string `json:"tags"`
		}
		if err := json.Unmarshal(g.AppendJSONArray(nil, pts), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(pts) {
			t.Fatalf("%d objects, want %d", len(got), len(pts))
		}
		for i, o := range got {
			p := &pts[i]
			if o.Metric != g.Metrics()[p.Metric].Name || o.Timestamp*1000 != p.T ||
				string(o.Value) != string(p.Text) || len(o.Tags) != 10 ||
				o.Tags["service_environment"] != g.Hosts()[p.Host].Tags[9] {
				t.Fatalf("object %d = %+v, point %+v", i, o, p)
			}
		}
	}
}

func TestInfluxParsesBack(t *testing.T) {
	for _, cfg := range smallCfgs {
		g, pts := allPoints(t, cfg)
		m := len(g.Metrics())
		var buf []byte
		for i := 0; i < len(pts); i += m {
			buf = g.AppendInflux(buf, pts[i:i+m])
		}
		n := decodeInflux(t, g, buf, pts)
		if n != len(pts) {
			t.Fatalf("%s: decoded %d fields, want %d", cfg.Shape, n, len(pts))
		}
	}
}

// decodeInflux checks every field of buf against pts and returns the count.
func decodeInflux(t *testing.T, g *Gen, buf []byte, pts []Point) int {
	dec := lineprotocol.NewDecoderWithBytes(buf)
	n := 0
	for dec.Next() {
		meas, err := dec.Measurement()
		if err != nil || string(meas) != g.Measurement() {
			t.Fatalf("measurement %q: %v", meas, err)
		}
		for i := 0; ; i++ {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			if string(k) != TagKeys[i] || string(v) != g.Hosts()[pts[n].Host].Tags[i] {
				t.Fatalf("tag %d %s=%s", i, k, v)
			}
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			p := &pts[n]
			ok := string(k) == g.Metrics()[p.Metric].Field
			if p.IsFloat {
				ok = ok && v.Kind() == lineprotocol.Float && v.FloatV() == p.Float
			} else {
				ok = ok && v.Kind() == lineprotocol.Int && v.IntV() == p.Int
			}
			if !ok {
				t.Fatalf("field %s=%v for point %+v", k, v, p)
			}
			n++
		}
		ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
		if err != nil || ts.UnixMilli() != pts[n-1].T {
			t.Fatalf("time %v (%v), want %d ms", ts, err, pts[n-1].T)
		}
	}
	if err := dec.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRemoteWriteParsesBack(t *testing.T) {
	for _, cfg := range smallCfgs {
		g, pts := allPoints(t, cfg)
		w := g.NewRemoteWriter()
		for _, batch := range [][]Point{pts[:g.NumSeries()], pts[g.NumSeries() : 2*g.NumSeries()-1]} {
			body, err := w.AppendRequest([]byte("prefix"), batch)
			if err != nil {
				t.Fatal(err)
			}
			checkRemoteWrite(t, g, body[len("prefix"):], batch)
		}
	}
}

func checkRemoteWrite(t *testing.T, g *Gen, body []byte, pts []Point) {
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if len(req.Timeseries) != len(pts) {
		t.Fatalf("%d series, want %d", len(req.Timeseries), len(pts))
	}
	for i, ts := range req.Timeseries {
		p := &pts[i]
		ls := ts.Labels
		if len(ls) != 11 || ls[0].Name != "__name__" || ls[0].Value != g.Metrics()[p.Metric].Name {
			t.Fatalf("labels %v", ls)
		}
		for j := 1; j < len(ls); j++ {
			if ls[j-1].Name >= ls[j].Name {
				t.Fatalf("labels not sorted: %v", ls)
			}
		}
		if len(ts.Samples) != 1 || ts.Samples[0].Timestamp != p.T || ts.Samples[0].Value != p.Float {
			t.Fatalf("samples %v for %+v", ts.Samples, p)
		}
	}
}

// TestEncoderCoversEverything: every format's batches add up to the dataset.
func TestEncoderCoversEverything(t *testing.T) {
	for _, f := range []Format{FormatTelnet, FormatJSON, FormatInflux, FormatRemoteWrite} {
		for _, cfg := range smallCfgs {
			g := mustNew(t, cfg)
			e := NewEncoder(g, f)
			total, batches := 0, 0
			for {
				body, n, err := e.AppendBatch(nil, 25)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				checkBatch(t, f, g, body, n)
				total += n
				batches++
			}
			if total != g.NumPoints() {
				t.Fatalf("%s %s: %d points in %d batches, want %d", f, cfg.Shape, total, batches, g.NumPoints())
			}
		}
	}
}

func checkBatch(t *testing.T, f Format, g *Gen, body []byte, n int) {
	var got int
	switch f {
	case FormatTelnet:
		got = bytes.Count(body, []byte("\nput ")) + 1
	case FormatJSON:
		var v []map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		got = len(v)
	case FormatInflux:
		got = bytes.Count(body, []byte("\n")) * len(g.Metrics())
	case FormatRemoteWrite:
		raw, _ := snappy.Decode(nil, body)
		var req prompb.WriteRequest
		if err := req.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		got = len(req.Timeseries)
		if n > g.NumSeries() {
			t.Fatalf("request of %d samples over %d series", n, g.NumSeries())
		}
	}
	if got != n {
		t.Fatalf("%s batch holds %d points, encoder said %d", f, got, n)
	}
}

func TestRemoteWriteDoesNotAllocate(t *testing.T) {
	g, pts := allPoints(t, Config{Hosts: 100, Span: 20 * time.Second})
	w := g.NewRemoteWriter()
	buf, _ := w.AppendRequest(nil, pts[:1000])
	allocs := testing.AllocsPerRun(20, func() {
		buf, _ = w.AppendRequest(buf[:0], pts[1000:2000])
	})
	if allocs != 0 && !raceOn() {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}
