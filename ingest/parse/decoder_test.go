package parse_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/prompb"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/promrw"
	"github.com/tsd-db/tsd/ingest/putjson"
)

// drain reads d through the interface alone, as the HTTP API does; typed
// is the decoder's own accessor of the refused element, which Bad must
// agree with.
func drain(t *testing.T, d parse.Decoder, typed func() error) ([]string, error) {
	t.Helper()
	var out []string
	for d.Next() {
		bad := d.Bad()
		if own := typed(); (bad == nil) != (own == nil) || bad != nil && bad != own {
			t.Fatalf("Bad() = %v, the decoder's own accessor %v", bad, own)
		}
		if bad != nil {
			out = append(out, "bad: "+bad.Error())
			continue
		}
		out = append(out, d.Point().String())
	}
	return out, d.Err()
}

// TestDecodersShareTheContract: each HTTP body decoder, read through
// parse.Decoder, yields its points and refused elements in body order,
// Bad set exactly for the refused ones, Err nil at the body's end and set
// when the body breaks off.
func TestDecodersShareTheContract(t *testing.T) {
	pj, _ := putjson.NewDecoder(nil)
	lp, _ := influx.NewDecoder(nil)
	rw, _ := promrw.NewDecoder(nil)
	typedPut := func() error { return errOrNil(pj.PointError()) }
	typedLine := func() error { return errOrNil(lp.LineError()) }
	typedSeries := func() error { return errOrNil(rw.SeriesError()) }
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: []prompb.Label{{Name: "__name__", Value: "m"}, {Name: "h", Value: "a"}}, Samples: []prompb.Sample{{Value: 1, Timestamp: 1000}}},
		{Labels: []prompb.Label{{Name: "h", Value: "b"}}, Samples: []prompb.Sample{{Value: 2, Timestamp: 1000}}},
		{Labels: []prompb.Label{{Name: "__name__", Value: "m"}, {Name: "h", Value: "c"}}, Samples: []prompb.Sample{{Value: 3, Timestamp: 2000}}},
	}}
	body, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		reset func(broken bool)
		d     parse.Decoder
		typed func() error
		want  []string
	}{
		{"putjson", func(broken bool) {
			b := `[{"metric":"m","timestamp":1,"value":1,"tags":{"h":"a"}},{"metric":"m","timestamp":1,"value":"x","tags":{"h":"b"}},{"metric":"m","timestamp":2,"value":3,"tags":{"h":"c"}}]`
			if broken {
				b = b[:len(b)-1] + `,{"metric"`
			}
			pj.Reset([]byte(b))
		}, pj, typedPut, []string{"m{h=a} 1000 1i", "bad: Unable to parse value to a number", "m{h=c} 2000 3i"}},
		{"influx", func(broken bool) {
			var r io.Reader = strings.NewReader("m,h=a v=1 1\nm,h=b v=x 1\nm,h=c v=3 2\n")
			if broken {
				r = io.MultiReader(r, errReader{})
			}
			lp.ResetReader(r, influx.Second, 0)
		}, lp, typedLine, []string{"m_v{h=a} 1000 1f64", "bad: unable to parse 'm,h=b v=x 1': invalid boolean (line 2)", "m_v{h=c} 2000 3f64"}},
		{"promrw", func(broken bool) {
			b := body
			if broken {
				b = append(append([]byte{}, body...), 0x0a, 0x7f)
			}
			rw.Reset(b, promrw.V1)
		}, rw, typedSeries, []string{"m{h=a} 1000 1f64", `bad: missing __name__ label for series {h="b"}`, "m{h=c} 2000 3f64"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.reset(false)
			got, err := drain(t, c.d, c.typed)
			if err != nil {
				t.Fatalf("whole body: Err %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got %q, want %q", got, c.want)
			}
			c.reset(true)
			broken, err := drain(t, c.d, c.typed)
			if err == nil {
				t.Errorf("broken body: Err nil after %q", broken)
			}
			if len(broken) > len(got) || strings.Join(broken, "\n") != strings.Join(got[:len(broken)], "\n") {
				t.Errorf("broken body yielded %q, want a prefix of %q", broken, got)
			}
		})
	}
}

func errOrNil[E any, P interface {
	*E
	error
}](p P) error {
	if p == nil {
		return nil
	}
	return p
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
