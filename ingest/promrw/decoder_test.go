package promrw

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/tsd-db/tsd/series"
)

// items decodes raw and formats every sample and bad series.
func items(t testing.TB, d *Decoder, raw []byte, v Version) []string {
	t.Helper()
	d.Reset(raw, v)
	var out []string
	for d.Next() {
		if se := d.SeriesError(); se != nil {
			out = append(out, "ERR "+se.Error())
			continue
		}
		p := d.Point()
		out = append(out, fmt.Sprintf("%s %x", p.String(), p.Value.Bits))
	}
	if d.Err() != nil {
		out = append(out, "FATAL "+d.Err().Error())
	}
	return out
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func lbls(kv ...string) []prompb.Label {
	var ls []prompb.Label
	for i := 0; i < len(kv); i += 2 {
		ls = append(ls, prompb.Label{Name: kv[i], Value: kv[i+1]})
	}
	return ls
}

func marshal(t testing.TB, m interface{ Marshal() ([]byte, error) }) []byte {
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newDecoder(t testing.TB, opts *Options) *Decoder {
	d, err := NewDecoder(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecodeV1(t *testing.T) {
	stale := math.Float64frombits(series.StaleNaN)
	req := &prompb.WriteRequest{
		Timeseries: []prompb.TimeSeries{
			{
				Labels:    lbls("__name__", "up", "instance", "a:9090", "job", "api", "empty", ""),
				Samples:   []prompb.Sample{{Value: 1, Timestamp: 1700000000000}, {Value: stale, Timestamp: 1700000015000}},
				Exemplars: []prompb.Exemplar{{Labels: lbls("trace_id", "x"), Value: 1, Timestamp: 1}},
			},
			{
				Labels:     lbls("le", "+Inf", "__name__", "http_requests_bucket", "path", "/a b"),
				Samples:    []prompb.Sample{{Value: 0.1, Timestamp: 5}},
				Histograms: []prompb.Histogram{{Count: &prompb.Histogram_CountInt{CountInt: 3}, Sum: 2, Timestamp: 5}},
			},
			{Labels: lbls("__name__", "h_only"), Histograms: []prompb.Histogram{{Timestamp: 1}, {Timestamp: 2}}},
		},
		Metadata: []prompb.MetricMetadata{{MetricFamilyName: "up", Help: "h", Type: prompb.MetricMetadata_GAUGE}},
	}
	d := newDecoder(t, nil)
	got := items(t, d, marshal(t, req), V1)
	check(t, got, []string{
		"up{instance=a:9090,job=api} 1700000000000 1f64 3ff0000000000000",
		"up{instance=a:9090,job=api} 1700000015000 NaNf64 7ff0000000000002",
		"http_requests_bucket{le=+Inf,path=/a b} 5 0.1f64 3fb999999999999a",
	})
	if st := d.Stats(); st != (Stats{Series: 3, Samples: 3, Histograms: 3, Exemplars: 1}) {
		t.Fatalf("stats %+v", st)
	}
}

func v2Request() *writev2.Request {
	syms := writev2.NewSymbolTable()
	refs := func(kv ...string) []uint32 {
		var r []uint32
		for _, s := range kv {
			r = append(r, syms.Symbolize(s))
		}
		return r
	}
	ts := []writev2.TimeSeries{
		{
			LabelsRefs: refs("__name__", "up", "job", "api"),
			Samples:    []writev2.Sample{{Value: 1, Timestamp: 10, StartTimestamp: 3}, {Value: 2, Timestamp: 20}},
			Exemplars:  []writev2.Exemplar{{LabelsRefs: refs("trace_id", "t"), Value: 1, Timestamp: 10}},
			Metadata:   writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_GAUGE, HelpRef: syms.Symbolize("help")},
		},
		{
			LabelsRefs: refs("__name__", "lat", "le", "+Inf"),
			Histograms: []writev2.Histogram{{Count: &writev2.Histogram_CountInt{CountInt: 1}, Timestamp: 30}},
			Samples:    []writev2.Sample{{Value: 5e-324, Timestamp: 30}},
		},
	}
	return &writev2.Request{Symbols: syms.Symbols(), Timeseries: ts}
}

func TestDecodeV2(t *testing.T) {
	d := newDecoder(t, nil)
	got := items(t, d, marshal(t, v2Request()), V2)
	check(t, got, []string{
		"up{job=api} 10 1f64 3ff0000000000000",
		"up{job=api} 20 2f64 4000000000000000",
		"lat{le=+Inf} 30 5e-324f64 1",
	})
	if st := d.Stats(); st != (Stats{Series: 2, Samples: 3, Histograms: 1, Exemplars: 1}) {
		t.Fatalf("stats %+v", st)
	}
}

func TestBadSeriesV1(t *testing.T) {
	good := prompb.TimeSeries{Labels: lbls("__name__", "ok"), Samples: []prompb.Sample{{Value: 0, Timestamp: 1}}}
	for _, tc := range []struct {
		ts   prompb.TimeSeries
		want string
	}{
		{prompb.TimeSeries{Labels: lbls("job", "x"), Samples: []prompb.Sample{{Timestamp: 1}, {Timestamp: 2}}},
			`missing __name__ label for series {job="x"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m", "a", "1", "a", "2"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`duplicate label a for series {__name__="m", a="1", a="2"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m", "__name__", "n"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`duplicate label __name__ for series {__name__="m", __name__="n"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m", "a", "x\ny"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`Invalid tag value ("x\ny"): illegal character: U+000A for series {__name__="m", a="x\ny"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "", "a", "b"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`Invalid metric name: empty string for series {__name__="", a="b"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m", "", "b"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`Invalid tag name: empty string for series {__name__="m", ="b"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m", "a", "1", "b", "2", "c", "3"), Samples: []prompb.Sample{{Timestamp: 1}}},
			`too many labels: more than 2 besides __name__ for series {__name__="m", a="1", b="2", c="3"}`},
		{prompb.TimeSeries{Labels: lbls("__name__", "m"), Samples: []prompb.Sample{{Value: 7, Timestamp: -5}, {Value: 8, Timestamp: 9}}},
			`sample timestamp -5 is before 1970 for series {__name__="m"}`},
	} {
		req := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{tc.ts, good}}
		d := newDecoder(t, &Options{MaxTags: 2})
		got := items(t, d, marshal(t, req), V1)
		want := []string{"ERR " + tc.want, "ok{} 1 0f64 0"}
		if strings.Contains(tc.want, "-5") {
			want = []string{"ERR " + tc.want, "m{} 9 8f64 4020000000000000", "ok{} 1 0f64 0"}
		}
		check(t, got, want)
	}
}

func TestBadSeriesV2(t *testing.T) {
	good := writev2.TimeSeries{LabelsRefs: []uint32{1, 2}, Samples: []writev2.Sample{{Value: 1, Timestamp: 1}}}
	for _, tc := range []struct {
		ts   writev2.TimeSeries
		want string
	}{
		{writev2.TimeSeries{LabelsRefs: []uint32{1, 2, 3}, Samples: []writev2.Sample{{Timestamp: 1}}},
			"invalid labelRefs length 3 for series [1 2 3]"},
		{writev2.TimeSeries{LabelsRefs: []uint32{1, 9}, Samples: []writev2.Sample{{Timestamp: 1}}},
			"labelRefs 1 (name) = 9 (value) outside of symbols table (size 4) for series [1 9]"},
		{writev2.TimeSeries{LabelsRefs: []uint32{1, 2}},
			`TimeSeries must contain at least one sample or histogram for series {__name__="ok"}`},
		{writev2.TimeSeries{LabelsRefs: []uint32{3, 3}, Samples: []writev2.Sample{{Timestamp: 1}}},
			`missing __name__ label for series {job="job"}`},
	} {
		req := &writev2.Request{Symbols: []string{"", "__name__", "ok", "job"}, Timeseries: []writev2.TimeSeries{tc.ts, good}}
		got := items(t, newDecoder(t, nil), marshal(t, req), V2)
		check(t, got, []string{"ERR " + tc.want, "ok{} 1 1f64 3ff0000000000000"})
	}
	req := &writev2.Request{Symbols: []string{"x", "__name__"}, Timeseries: []writev2.TimeSeries{good}}
	got := items(t, newDecoder(t, nil), marshal(t, req), V2)
	check(t, got, []string{"FATAL malformed io.prometheus.write.v2.Request at byte 2: symbols[0] must be the empty string"})
}

func TestMalformedBodies(t *testing.T) {
	raw := marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: lbls("__name__", "a"), Samples: []prompb.Sample{{Value: 1, Timestamp: 1}}},
		{Labels: lbls("__name__", "b"), Samples: []prompb.Sample{{Value: 2, Timestamp: 2}}},
	}})
	d := newDecoder(t, nil)
	check(t, items(t, d, raw[:len(raw)-3], V1), []string{
		"a{} 1 1f64 3ff0000000000000",
		"FATAL malformed prometheus.WriteRequest at byte 31: timeseries overflows the message",
	})
	if !IsDecodeError(d.Err()) {
		t.Fatal("not a DecodeError")
	}
	check(t, items(t, d, []byte{0x08, 0x01}, V1), []string{"FATAL malformed prometheus.WriteRequest at byte 0: timeseries with wire type 0"})
	check(t, items(t, d, []byte{0x00}, V1), []string{"FATAL malformed prometheus.WriteRequest at byte 0: bad field key"})
	check(t, items(t, d, []byte{0x13, 0x01}, V1), []string{"FATAL malformed prometheus.WriteRequest at byte 1: field 2 (wire type 3) is truncated or of an unsupported type"})
	check(t, items(t, d, []byte{0x0a, 0x02, 0x12, 0x05}, V1), []string{"FATAL malformed prometheus.WriteRequest at byte 3: field 2 (wire type 2) is truncated or of an unsupported type in timeseries"})
	check(t, items(t, d, nil, V1), nil)
	check(t, items(t, d, []byte("not a protobuf message at all"), V2), []string{"FATAL malformed io.prometheus.write.v2.Request at byte 1: field 13 (wire type 6) is truncated or of an unsupported type"})
}

func TestParseContentType(t *testing.T) {
	for ct, want := range map[string]Version{
		"":                         V1,
		"application/x-protobuf":   V1,
		" Application/X-Protobuf ": V1,
		"application/x-protobuf;proto=prometheus.WriteRequest":                  V1,
		"application/x-protobuf;proto=io.prometheus.write.v2.Request":           V2,
		"application/x-protobuf; proto=io.prometheus.write.v2.Request":          V2,
		"application/x-protobuf;charset=x;proto=io.prometheus.write.v2.Request": V2,
	} {
		if v, err := ParseContentType(ct); err != nil || v != want {
			t.Errorf("%q: %v %v", ct, v, err)
		}
	}
	for ct, want := range map[string]string{
		"application/json": `unsupported remote write content type: expected application/x-protobuf as the media type, got "application/json"`,
		"application/x-protobuf;proto=io.prometheus.write.v3.Request": `unsupported remote write content type: unknown remote write protobuf message "io.prometheus.write.v3.Request", supported: prometheus.WriteRequest, io.prometheus.write.v2.Request`,
		"application/x-protobuf;junk":                                 `unsupported remote write content type: parameter "junk" of "application/x-protobuf;junk" is not key=value`,
	} {
		_, err := ParseContentType(ct)
		if !errors.Is(err, ErrUnsupported) || err.Error() != want {
			t.Errorf("%q: %v", ct, err)
		}
	}
}

func TestDecompress(t *testing.T) {
	raw := []byte(strings.Repeat("remote write ", 1000))
	body := snappy.Encode(nil, raw)
	buf := make([]byte, 0, 1<<16)
	out, err := Decompress(buf, body, 1<<20)
	if err != nil || string(out) != string(raw) || &out[0] != &buf[:1][0] {
		t.Fatalf("decode: %v, reused %v", err, err == nil && &out[0] == &buf[:1][0])
	}
	if _, err := Decompress(nil, body, 100); !errors.Is(err, ErrTooLarge) || err.Error() != "remote write: decompressed body too large: 13000 bytes, limit 100" {
		t.Fatalf("limit: %v", err)
	}
	if _, err := Decompress(nil, []byte("\xff\xff\xff"), 0); !errors.Is(err, ErrSnappy) {
		t.Fatalf("garbage: %v", err)
	}
	// A header claiming 1 GiB is refused before anything is allocated.
	bomb := []byte{0x80, 0x80, 0x80, 0x80, 0x04, 0x00}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Decompress(nil, bomb, 64<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bomb: %v", err)
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Fatalf("bomb allocated %d bytes", grown)
	}
}
