package promrw

import (
	"fmt"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/tsd-db/tsd/uid"
)

// FuzzDecode: arbitrary bodies of either version never panic, the counts
// add up, and yielded names obey the lossless rules.
func FuzzDecode(f *testing.F) {
	f.Add(marshal(f, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: lbls("__name__", "up", "job", "a"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
		{Labels: lbls("job", "b"), Samples: []prompb.Sample{{Value: 1, Timestamp: -2}}},
	}}), false)
	f.Add(marshal(f, v2Request()), true)
	f.Add([]byte{0x0a, 0x02, 0x12, 0x05}, false)
	v := uid.NewValidator(uid.RulesLossless, "")
	f.Fuzz(func(t *testing.T, raw []byte, v2 bool) {
		ver := V1
		if v2 {
			ver = V2
		}
		d := newDecoder(t, &Options{MaxTags: 4})
		d.Reset(raw, ver)
		var samples, bad int64
		for d.Next() {
			if d.SeriesError() != nil {
				bad++
				continue
			}
			samples++
			p := d.Point()
			if v.Validate(uid.Metric, p.Metric) != nil || len(p.Tags) > 4 || p.Value.T < 0 {
				t.Fatalf("bad point yielded: %s", p)
			}
			for _, tag := range p.Tags {
				if v.Validate(uid.TagK, tag.Key) != nil || v.Validate(uid.TagV, tag.Value) != nil {
					t.Fatalf("bad tag yielded: %q=%q", tag.Key, tag.Value)
				}
			}
		}
		st := d.Stats()
		if st.Samples != samples || st.BadSeries > bad || samples > st.Series*int64(len(raw)) {
			t.Fatalf("stats %+v, %d samples, %d bad", st, samples, bad)
		}
	})
}

// FuzzRoundTrip marshals one series with Prometheus's code in both
// versions and checks the decoder reads back its labels and sample bits.
func FuzzRoundTrip(f *testing.F) {
	f.Add("up", "job", "api", uint64(0x7ff0000000000002), int64(1700000000000))
	f.Add("http_requests_total", "le", "+Inf", uint64(0), int64(0))
	f.Add("中文", "标签", "值 x", math.Float64bits(-1.5), int64(math.MaxInt64))
	v := uid.NewValidator(uid.RulesLossless, "")
	f.Fuzz(func(t *testing.T, name, k, val string, bits uint64, ts int64) {
		if v.ValidateString(uid.Metric, name) != nil || v.ValidateString(uid.TagK, k) != nil ||
			v.ValidateString(uid.TagV, val) != nil || !utf8.ValidString(name+k+val) || k == "__name__" || ts < 0 {
			return
		}
		want := fmt.Sprintf("%s{%s=%s} %d %x", name, k, val, ts, bits)
		fv := math.Float64frombits(bits)
		if bits == 1<<63 {
			// proto3 drops a -0 value (it equals the default 0).
			want = fmt.Sprintf("%s{%s=%s} %d 0", name, k, val, ts)
		}
		r1 := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{Labels: lbls("__name__", name, k, val), Samples: []prompb.Sample{{Value: fv, Timestamp: ts}}}}}
		r2 := &writev2.Request{Symbols: []string{"", "__name__", name, k, val}, Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 2, 3, 4}, Samples: []writev2.Sample{{Value: fv, Timestamp: ts}}}}}
		d := newDecoder(t, nil)
		for _, tc := range []struct {
			raw []byte
			v   Version
		}{{marshal(t, r1), V1}, {marshal(t, r2), V2}} {
			d.Reset(tc.raw, tc.v)
			if !d.Next() || d.SeriesError() != nil {
				t.Fatalf("%v: %v %v", tc.v, d.SeriesError(), d.Err())
			}
			p := d.Point()
			got := fmt.Sprintf("%s{%s=%s} %d %x", p.Metric, p.Tags[0].Key, p.Tags[0].Value, p.Value.T, p.Value.Bits)
			if got != want || d.Next() {
				t.Fatalf("%v: got %s, want %s", tc.v, got, want)
			}
		}
	})
}

// FuzzDecompress: arbitrary bodies never panic and never decode past the
// limit.
func FuzzDecompress(f *testing.F) {
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x04, 0x00})
	f.Add([]byte("\x0cremote write"))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := Decompress(nil, body, 1<<16)
		if len(out) > 1<<16 || (err != nil && len(out) != 0) {
			t.Fatalf("%d bytes out, err %v", len(out), err)
		}
	})
}
