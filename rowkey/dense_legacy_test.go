package rowkey

import (
	"bufio"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// legacyCases are the points of testdata/dense_state23.txt, regenerated
// from fixed seeds: cells written before the coder's state started at 1
// (header bit 5 clear, state ending at 2^23), which every tsd since must
// still read.
func legacyCases() map[string][]series.Point {
	r := rand.New(rand.NewPCG(7, 23))
	walk := int64(500)
	fwalk := int64(5000)
	return map[string][]series.Point{
		"int walk": regular(360, 10000, func(int) series.Point {
			walk += int64(math.RoundToEven(3 * r.NormFloat64()))
			return series.IntPoint(0, walk)
		}),
		"decimal walk": regular(360, 10000, func(int) series.Point {
			fwalk += int64(math.RoundToEven(100 * r.NormFloat64()))
			return series.Float64Point(0, float64(fwalk)/100)
		}),
		"counter":       regular(360, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i)*1000+int64(r.IntN(50))) }),
		"random floats": regular(60, 15000, func(int) series.Point { return series.Float64Point(0, r.Float64()*1e6) }),
		"mixed": regular(40, 5000, func(i int) series.Point {
			switch i % 3 {
			case 0:
				return series.IntPoint(0, int64(i))
			case 1:
				return series.Float32Point(0, float32(i)+0.5)
			}
			return series.Point{Bits: series.StaleNaN, Kind: series.Float64}
		}),
		"two ints": regular(2, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i)) }),
	}
}

// TestDenseLegacyCells decodes cells written by the encoder before header
// bit 5 (testdata/dense_state23.txt): each gives back its points exactly,
// and a flipped bit 5 makes it corrupt rather than other points. The
// encoder now writes the same points with bit 5, shorter.
func TestDenseLegacyCells(t *testing.T) {
	f, err := os.Open("testdata/dense_state23.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := legacyCases()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		name, hx, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		want, ok := cases[name]
		if !ok {
			t.Fatalf("testdata names %q, not a legacy case", name)
		}
		v, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		if v[0]&hStartOne != 0 {
			t.Fatalf("%s: header %02x has bit 5 set: not a legacy cell", name, v[0])
		}
		var it DenseIter
		got, err := it.DecodeDense(nil, testBase, v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d points, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: point %d = %+v, want %+v", name, i, got[i], want[i])
			}
		}
		var enc DenseEncoder
		now, err := enc.Append(nil, testBase, want)
		if err != nil || now[0]&hStartOne == 0 {
			t.Fatalf("%s: encoded %x, %v: want header bit 5", name, now[:1], err)
		}
		if len(want) >= 60 && len(now) > len(v)-2 {
			t.Errorf("%s: %d bytes now, %d before: want about 3 fewer", name, len(now), len(v))
		}
		if len(want) > 2 {
			v[0] |= hStartOne
			if _, err := it.DecodeDense(nil, testBase, v); err == nil {
				t.Errorf("%s: read with bit 5 set, want corrupt", name)
			}
		}
		seen++
	}
	if seen != len(cases) {
		t.Fatalf("%d legacy cells in testdata, want %d", seen, len(cases))
	}
}
