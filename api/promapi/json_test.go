package promapi

import (
	"math"
	"math/rand/v2"
	"testing"

	jsoniter "github.com/json-iterator/go"
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
