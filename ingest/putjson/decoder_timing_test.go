package putjson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/internal/invariants"
)

func jsonBodies(t testing.TB, n int) ([][]byte, int) {
	return gen.MustBodies(t, gen.Config{Values: gen.ValuesFloat}, gen.FormatJSON, 1000, n)
}

// incoming is OpenTSDB's IncomingDataPoint as encoding/json reads it: the
// reference side of the benchmark.
type incoming struct {
	Metric    string            `json:"metric"`
	Timestamp int64             `json:"timestamp"`
	Value     json.Number       `json:"value"`
	Tags      map[string]string `json:"tags"`
}

// BenchmarkDecode parses bench/gen's /api/put bodies (1,000 points of 10
// tags a body) with tsd's decoder, whole (Reset) and streamed through its
// window (ResetReader), and, for reference, encoding/json into
// OpenTSDB's data point shape; one op is one body.
func BenchmarkDecode(b *testing.B) {
	bodies, n := jsonBodies(b, 20_000)
	d := newDecoder(b, nil)
	var r bytes.Reader
	parse := func(body []byte) (int, error) {
		k := 0
		for d.Next() {
			if pe := d.PointError(); pe != nil {
				return k, pe
			}
			k++
		}
		return k, d.Err()
	}
	gen.BenchParsers(b, "points",
		gen.ParseCase{Name: "tsd", Bodies: bodies, Points: n, Parse: func(body []byte) (int, error) {
			d.Reset(body)
			return parse(body)
		}},
		gen.ParseCase{Name: "tsd-reader", Bodies: bodies, Points: n, Parse: func(body []byte) (int, error) {
			r.Reset(body)
			d.ResetReader(&r)
			return parse(body)
		}},
		gen.ParseCase{Name: "encoding-json", Bodies: bodies, Points: n, Parse: func(body []byte) (int, error) {
			var pts []incoming
			err := json.Unmarshal(body, &pts)
			return len(pts), err
		}})
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	bodies, _ := jsonBodies(t, 3000)
	bodies = append(bodies, []byte(`[{"metric":"m\u00e9","timestamp":"1","value":"1e3","tags":{"a":"b","a":"c"},"x":[1,{"y":null}]}]`))
	d := newDecoder(t, nil)
	run := func() {
		for _, b := range bodies {
			d.Reset(b)
			for d.Next() {
				if d.PointError() != nil {
					t.Fatal(d.PointError())
				}
			}
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}
