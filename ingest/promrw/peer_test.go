package promrw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/internal/invariants"
)

// benchRaw returns the bench remote_write requests, snappy-decoded.
func benchRaw(t testing.TB, cfg gen.Config, maxPoints int) ([][]byte, [][]byte, int) {
	bodies, n := gen.MustBodies(t, cfg, gen.FormatRemoteWrite, 1000, maxPoints)
	raws := make([][]byte, len(bodies))
	for i, b := range bodies {
		var err error
		if raws[i], err = Decompress(nil, b, 0); err != nil {
			t.Fatal(err)
		}
	}
	return bodies, raws, n
}

// peerItems formats what prompb reads from raw the way items does.
func peerItems(t testing.TB, raw []byte) []string {
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ts := range req.Timeseries {
		var name, tags string
		for _, l := range ts.Labels {
			if l.Name == "__name__" {
				name = l.Value
				continue
			}
			if tags != "" {
				tags += ","
			}
			tags += l.Name + "=" + l.Value
		}
		for _, s := range ts.Samples {
			bits := math.Float64bits(s.Value)
			out = append(out, fmt.Sprintf("%s{%s} %d %sf64 %x", name, tags, s.Timestamp, fmtFloat(s.Value), bits))
		}
	}
	return out
}

func fmtFloat(f float64) string {
	return fmt.Sprint(f)
}

func TestAgreesWithPrompb(t *testing.T) {
	_, raws, n := benchRaw(t, gen.Config{Hosts: 7, Span: time.Hour, Values: gen.ValuesFloat}, 5000)
	d := newDecoder(t, nil)
	total := 0
	for _, raw := range raws {
		got := items(t, d, raw, V1)
		want := peerItems(t, raw)
		for i := range got {
			got[i] = normalize(got[i])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v\nwant %v", got[:1], want[:1])
		}
		total += len(got)
	}
	if total != n {
		t.Fatalf("%d samples, want %d", total, n)
	}
}

// normalize rewrites parse.Point.String's float with fmt's format.
func normalize(s string) string {
	var name, ts, v, bits string
	fmt.Sscan(s, &name, &ts, &v, &bits)
	var f float64
	fmt.Sscan(v[:len(v)-3], &f)
	return fmt.Sprintf("%s %s %sf64 %s", name, ts, fmtFloat(f), bits)
}

// TestRandomRequestsAgreeWithPrompb builds random requests (odd values,
// staleness markers, extreme times, unicode labels) and compares.
func TestRandomRequestsAgreeWithPrompb(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	d := newDecoder(t, nil)
	for range 50 {
		var req prompb.WriteRequest
		for s := range r.IntN(20) {
			ts := prompb.TimeSeries{Labels: lbls("__name__", fmt.Sprintf("m_%d", s), "é", fmt.Sprintf("v%d", r.IntN(9)))}
			for range r.IntN(4) + 1 {
				v := math.Float64frombits(r.Uint64())
				if r.IntN(4) == 0 {
					v = math.Float64frombits(0x7ff0000000000002)
				}
				ts.Samples = append(ts.Samples, prompb.Sample{Value: v, Timestamp: r.Int64N(math.MaxInt64)})
			}
			req.Timeseries = append(req.Timeseries, ts)
		}
		raw := marshal(t, &req)
		got := items(t, d, raw, V1)
		want := peerItems(t, raw)
		for i := range got {
			got[i] = normalize(got[i])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	bodies, _, _ := benchRaw(t, gen.Config{Hosts: 10, Span: time.Hour, Values: gen.ValuesFloat}, 3000)
	v2raw := marshal(t, v2Request())
	d := newDecoder(t, nil)
	var buf []byte
	run := func() {
		for _, b := range bodies {
			var err error
			if buf, err = Decompress(buf, b, 0); err != nil {
				t.Fatal(err)
			}
			d.Reset(buf, V1)
			for d.Next() {
				_ = d.Point()
			}
		}
		d.Reset(v2raw, V2)
		for d.Next() {
			_ = d.Point()
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}
