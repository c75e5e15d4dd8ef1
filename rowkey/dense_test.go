package rowkey

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/series"
)

const testBase = int64(1356998400)

func regular(n int, step int64, val func(i int) series.Point) []series.Point {
	pts := make([]series.Point, n)
	for i := range pts {
		p := val(i)
		p.T = testBase*1000 + int64(i)*step
		pts[i] = p
	}
	return pts
}

func roundTrip(t *testing.T, name string, pts []series.Point) []byte {
	t.Helper()
	var enc DenseEncoder
	v, err := enc.Append(nil, testBase, pts)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	var it DenseIter
	got, err := it.DecodeDense(nil, testBase, v)
	if err != nil {
		t.Fatalf("%s: decode: %v (value %x)", name, err, v)
	}
	if len(got) != len(pts) {
		t.Fatalf("%s: %d points, want %d", name, len(got), len(pts))
	}
	for i := range pts {
		if got[i] != pts[i] {
			t.Fatalf("%s: point %d = %+v, want %+v", name, i, got[i], pts[i])
		}
	}
	return v
}

func TestDenseRoundTripShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	walk := int64(50)
	fwalk := int64(5000)
	cases := map[string][]series.Point{
		"one int":  regular(1, 10000, func(int) series.Point { return series.IntPoint(0, 42) }),
		"two ints": regular(2, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i)) }),
		"constant": regular(360, 10000, func(int) series.Point { return series.IntPoint(0, 7) }),
		"int walk": regular(360, 10000, func(int) series.Point {
			walk = min(max(walk+int64(math.RoundToEven(r.NormFloat64())), 0), 100)
			return series.IntPoint(0, walk)
		}),
		"decimal walk": regular(360, 10000, func(int) series.Point {
			fwalk += int64(math.RoundToEven(100 * r.NormFloat64()))
			return series.Float64Point(0, float64(fwalk)/100)
		}),
		"float32 decimals": regular(100, 1000, func(i int) series.Point { return series.Float32Point(0, float32(i)/10) }),
		"random floats":    regular(240, 15000, func(int) series.Point { return series.Float64Point(0, r.Float64()*1e6) }),
		"random float32":   regular(50, 15000, func(int) series.Point { return series.Float32Point(0, r.Float32()) }),
		"extremes": regular(6, 1, func(i int) series.Point {
			return series.IntPoint(0, []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MinInt64, 1}[i])
		}),
		"counter": regular(360, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i)*1000+int64(r.IntN(50))) }),
		"specials": regular(8, 10, func(i int) series.Point {
			bits := []uint64{series.StaleNaN, math.Float64bits(math.Inf(1)), math.Float64bits(math.Copysign(0, -1)),
				0x7ff8000000000001, math.Float64bits(0.1 + 0.2), math.Float64bits(1e300), 1, math.Float64bits(-2.5)}[i]
			return series.Point{Bits: bits, Kind: series.Float64}
		}),
		"mixed": regular(200, 5000, func(i int) series.Point {
			switch i % 5 {
			case 0:
				return series.IntPoint(0, int64(i))
			case 1:
				return series.Float32Point(0, float32(i)+0.5)
			case 2:
				return series.Float64Point(0, float64(i)/100)
			case 3:
				return series.Point{Bits: series.StaleNaN, Kind: series.Float64}
			}
			return series.Float32Point(0, float32(math.Pi))
		}),
		"ints and decimals": regular(50, 5000, func(i int) series.Point {
			if i%2 == 0 {
				return series.IntPoint(0, int64(i))
			}
			return series.Float64Point(0, float64(i)+0.25)
		}),
		"huge ints with decimals": regular(10, 5000, func(i int) series.Point {
			if i%2 == 0 {
				return series.IntPoint(0, math.MaxInt64-int64(i))
			}
			return series.Float64Point(0, float64(i)+0.5)
		}),
	}
	jitter := regular(360, 10000, func(int) series.Point { return series.IntPoint(0, 1) })
	for i := range jitter {
		jitter[i].T += int64(r.IntN(20))
	}
	cases["jittered times"] = jitter
	for name, pts := range cases {
		roundTrip(t, name, pts)
	}
}

func TestDenseStaleMarkerKeepsDecimalChain(t *testing.T) {
	pts := regular(360, 10000, func(i int) series.Point { return series.Float64Point(0, float64(i%17)/4) })
	pts[200] = series.Point{T: pts[200].T, Bits: series.StaleNaN, Kind: series.Float64}
	v := roundTrip(t, "stale", pts)
	if len(v) > 200 {
		t.Fatalf("one stale marker cost the whole row: %d bytes", len(v))
	}
}

func TestDenseEncoderRejects(t *testing.T) {
	var enc DenseEncoder
	ok := series.IntPoint(testBase*1000, 1)
	for name, pts := range map[string][]series.Point{
		"empty":       nil,
		"unsorted":    {ok, series.IntPoint(testBase*1000-1, 1)},
		"duplicate":   {ok, ok},
		"before row":  {series.IntPoint(testBase*1000-1, 1)},
		"after row":   {series.IntPoint(testBase*1000+RowSpanMs, 1)},
		"bad kind":    {{T: testBase * 1000, Kind: 9}},
		"bad float32": {{T: testBase * 1000, Bits: math.Float64bits(0.1), Kind: series.Float32}},
	} {
		if _, err := enc.Append(nil, testBase, pts); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDenseIterSeekAndErrors(t *testing.T) {
	pts := regular(1000, 3000, func(i int) series.Point { return series.IntPoint(0, int64(i*i%97)) })
	var enc DenseEncoder
	v, err := enc.Append(nil, testBase, pts)
	if err != nil {
		t.Fatal(err)
	}
	var it DenseIter
	if err := it.Reset(testBase, v); err != nil || it.Len() != 1000 {
		t.Fatalf("Reset: %v, %d points", err, it.Len())
	}
	var s series.Iterator = &it
	if !s.SeekTime(pts[500].T-1) || s.At() != pts[500] {
		t.Fatalf("SeekTime to 500: %v", s.At())
	}
	if !s.SeekTime(0) || s.At() != pts[500] {
		t.Fatal("SeekTime went backwards")
	}
	n := 501
	for s.Next() {
		if s.At() != pts[n] {
			t.Fatalf("point %d = %v", n, s.At())
		}
		n++
	}
	if n != 1000 || s.Err() != nil || s.SeekTime(0) {
		t.Fatalf("ended at %d: %v", n, s.Err())
	}
	// A trailing byte or a missing one is caught by the end-of-stream check.
	for _, bad := range [][]byte{append(append([]byte{}, v...), 0), v[:len(v)-1]} {
		it.Reset(testBase, bad)
		for it.Next() {
		}
		if !errors.Is(it.Err(), ErrCorrupt) {
			t.Fatalf("corrupt tail: %v", it.Err())
		}
	}
	for _, hdr := range [][]byte{{}, {0x20, 1, 0}, {0x05, 1, 0}, {0x10, 0, 0}, {0x10, 2, 0}} {
		if err := it.Reset(testBase, hdr); !errors.Is(err, ErrCorrupt) {
			t.Errorf("header %x: %v", hdr, err)
		}
	}
}

// TestDenseFirst: First's answer from the header is the first point
// decoding gives, for every class whose header holds it, and a cell
// starting after its row's base gives that time.
func TestDenseFirst(t *testing.T) {
	base := int64(1_700_000_000 - 1_700_000_000%3600)
	rows := map[string][]series.Point{}
	for name, mk := range map[string]func(i int64) series.Point{
		"int":      func(i int64) series.Point { return series.IntPoint(0, 100-i*3) },
		"dec64":    func(i int64) series.Point { return series.Float64Point(0, float64(i)*0.25-7.5) },
		"dec32":    func(i int64) series.Point { return series.Float32Point(0, float32(i)*0.5) },
		"raw64":    func(i int64) series.Point { return series.Float64Point(0, 1/float64(i+3)) },
		"negative": func(i int64) series.Point { return series.IntPoint(0, -1_000_000_007*i-5) },
	} {
		for _, off := range []int64{0, 10_000} {
			var pts []series.Point
			for i := range int64(50) {
				p := mk(i)
				p.T = base*1000 + off + i*10_000
				pts = append(pts, p)
			}
			rows[fmt.Sprintf("%s/%d", name, off)] = pts
		}
	}
	var enc DenseEncoder
	var it DenseIter
	for name, pts := range rows {
		v, err := enc.Append(nil, base, pts)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := it.First(base, v)
		if !ok {
			if strings.HasPrefix(name, "int") || strings.HasPrefix(name, "dec") {
				t.Errorf("%s: First not from the header", name)
			}
			continue
		}
		if p.T != pts[0].T || (pts[0].T == base*1000 && p != pts[0]) {
			t.Errorf("%s: First %+v, want %+v", name, p, pts[0])
		}
	}
}
