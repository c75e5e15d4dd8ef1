package promapi

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/util/jsonutil"
)

// TestFloatStringIsPrometheus: sample values are written byte for byte as
// Prometheus's web API writes them (jsonutil.MarshalFloat), whole numbers
// (written without the float formatter) and their neighbours included.
func TestFloatStringIsPrometheus(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 57, 1e15 - 1, 1e15, -1e15 + 1, 1e15 + 2, 1 << 53, 1e21, 1e-7,
		0.1, 2.5, -3.75, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		vals = append(vals,
			float64(rng.Int64N(1<<52)-1<<51),
			math.Float64frombits(rng.Uint64()),
			math.Round(rng.NormFloat64()*1e6)/100,
			math.Nextafter(float64(rng.Int64N(1e15)), math.Inf(1)))
	}
	stream := jsoniter.ConfigCompatibleWithStandardLibrary.BorrowStream(nil)
	defer jsoniter.ConfigCompatibleWithStandardLibrary.ReturnStream(stream)
	for _, f := range vals {
		stream.Reset(nil)
		jsonutil.MarshalFloat(f, stream)
		if got, want := string(appendFloatString(nil, f)), string(stream.Buffer()); got != want {
			t.Fatalf("%v (bits %#x): wrote %s, Prometheus %s", f, math.Float64bits(f), got, want)
		}
	}
}

// TestResultSourceIsWhole: every result type written in parts
// (resultSource, from 1 byte a part to the whole) is byte for byte
// appendSuccess around appendQueryData, with and without warnings,
// infos and statistics.
func TestResultSourceIsWhole(t *testing.T) {
	m := make(promql.Matrix, 3)
	for i := range m {
		m[i].Metric = labels.FromStrings("__name__", "cpu", "host", "h<"+string(rune('0'+i)))
		for j := range 5 + i {
			m[i].Floats = append(m[i].Floats, promql.FPoint{T: 1_700_000_000_250 + int64(j)*15_000, F: float64(j) / 3})
		}
	}
	v := promql.Vector{{Metric: labels.FromStrings("a", "b"), T: 1_700_000_000_000, F: 1.5}, {Metric: labels.FromStrings("a", "c"), T: 1_700_000_000_000, F: math.NaN()}}
	for _, val := range []promql.Result{{Value: m}, {Value: promql.Matrix{}}, {Value: v}, {Value: promql.Vector{}},
		{Value: promql.Scalar{T: 1_700_000_000_500, V: 1e-7}}, {Value: promql.String{T: 1_700_000_000_000, V: "a\"b"}}} {
		for _, extra := range []struct {
			warnings, infos []string
			stats           []byte
		}{{}, {[]string{"w<1", "w2"}, []string{"i"}, []byte(`{"timings":{}}`)}} {
			want := string(appendSuccess(nil, extra.warnings, extra.infos, func(b []byte) []byte { return appendQueryData(b, val, extra.stats) }))
			for _, max := range []int{1, 20, 1 << 20} {
				l := newResultSource(val, extra.stats, extra.warnings, extra.infos, nil)
				var got, part []byte
				for done := false; !done; {
					var err error
					if part, done, err = l.Next(context.Background(), part[:0], max); err != nil {
						t.Fatal(err)
					}
					got = append(got, part...)
				}
				if string(got) != want {
					t.Errorf("%s max %d:\n%s\nwant\n%s", val.Value.Type(), max, got, want)
				}
			}
		}
	}
}
