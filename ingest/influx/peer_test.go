package influx

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
)

// peerPoints decodes body with line-protocol/v2 into the same text form as
// parse.Point.String.
func peerPoints(t testing.TB, body []byte) []string {
	dec := lineprotocol.NewDecoderWithBytes(body)
	var out []string
	for dec.Next() {
		m, err := dec.Measurement()
		if err != nil {
			t.Fatal(err)
		}
		var tags bytes.Buffer
		for {
			k, v, err := dec.NextTag()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			if tags.Len() > 0 {
				tags.WriteByte(',')
			}
			fmt.Fprintf(&tags, "%s=%s", k, v)
		}
		type fv struct {
			k string
			v lineprotocol.Value
		}
		var fields []fv
		for {
			k, v, err := dec.NextField()
			if err != nil {
				t.Fatal(err)
			}
			if k == nil {
				break
			}
			fields = append(fields, fv{string(k), v})
		}
		ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields {
			var p series.Point
			switch f.v.Kind() {
			case lineprotocol.Float:
				p = series.Float64Point(ts.UnixMilli(), f.v.FloatV())
			case lineprotocol.Int:
				p = series.IntPoint(ts.UnixMilli(), f.v.IntV())
			default:
				t.Fatalf("kind %v", f.v.Kind())
			}
			out = append(out, fmt.Sprintf("%s_%s{%s} %d %s", m, f.k, tags.String(), p.T, fmtValue(p)))
		}
	}
	return out
}

func fmtValue(p series.Point) string {
	if p.Kind == series.Int {
		return fmt.Sprintf("%di", p.Int())
	}
	return fmt.Sprintf("%sf64", fmt.Sprint(math.Float64frombits(p.Bits)))
}

// TestAgreesWithLineProtocolV2 decodes the bench dataset (both value
// modes) and compares every point with the peer's reading.
func TestAgreesWithLineProtocolV2(t *testing.T) {
	for _, mode := range []gen.ValueMode{gen.ValuesFloat, gen.ValuesInt} {
		bodies, n := gen.MustBodies(t, gen.Config{Hosts: 7, Span: time.Hour, Values: mode}, gen.FormatInflux, 1000, 5000)
		d, _ := NewDecoder(nil)
		total := 0
		for _, b := range bodies {
			got := items(t, d, nil, string(b), Nanosecond, 0)
			want := peerPoints(t, b)
			for i := range got {
				got[i] = normalize(got[i])
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v: first difference\n got %v\nwant %v", mode, got[:2], want[:2])
			}
			total += len(got)
		}
		if total != n {
			t.Fatalf("%d points, want %d", total, n)
		}
	}
}

// normalize rewrites parse.Point.String's value with fmt's float format.
func normalize(s string) string {
	i := bytes.LastIndexByte([]byte(s), ' ')
	v := s[i+1:]
	if len(v) > 3 && v[len(v)-3:] == "f64" {
		var f float64
		fmt.Sscan(v[:len(v)-3], &f)
		return s[:i+1] + fmt.Sprint(f) + "f64"
	}
	return s
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	bodies, _ := gen.MustBodies(t, gen.Config{Hosts: 10, Span: time.Hour, Values: gen.ValuesFloat}, gen.FormatInflux, 1000, 3000)
	bodies = append(bodies, []byte("bad line\nm,k=v\\ x a\\=b=1i,s=\"str\",b=t 1\n# c\n"))
	d, _ := NewDecoder(nil)
	run := func() {
		for _, b := range bodies {
			d.Reset(b, Nanosecond, 0)
			for d.Next() {
				_ = d.Point()
			}
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// peerParse is the line-protocol/v2 side of the benchmark: the measurement,
// every tag, every field value and the timestamp of each line, one point
// per field (bench/parsebench.Influx).
func peerParse(body []byte) (int, error) {
	dec := lineprotocol.NewDecoderWithBytes(body)
	n := 0
	for dec.Next() {
		if _, err := dec.Measurement(); err != nil {
			return n, err
		}
		for {
			k, _, err := dec.NextTag()
			if err != nil {
				return n, err
			}
			if k == nil {
				break
			}
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				return n, err
			}
			if k == nil {
				break
			}
			_ = v.Interface()
			n++
		}
		if _, err := dec.Time(lineprotocol.Nanosecond, time.Time{}); err != nil {
			return n, err
		}
	}
	return n, dec.Err()
}
