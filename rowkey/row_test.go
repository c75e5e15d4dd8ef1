package rowkey

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
)

func ms(off int64) int64 { return testBase*1000 + off }

func denseCell(t *testing.T, writer, seq uint32, ts int64, pts ...series.Point) Cell {
	t.Helper()
	var enc DenseEncoder
	v, err := enc.Append(nil, testBase, pts)
	if err != nil {
		t.Fatal(err)
	}
	return Cell{Qualifier: AppendDenseQualifier(nil, writer, seq), Value: v, Timestamp: ts}
}

func singleCell(t *testing.T, off int64, p series.Point, ts int64) Cell {
	t.Helper()
	q, err := AppendQualifier(nil, NewQualifier(off, ValueFlags(p)))
	if err != nil {
		t.Fatal(err)
	}
	return Cell{Qualifier: q, Value: AppendValue(nil, p), Timestamp: ts}
}

// mixedRow holds every format with deliberate duplicates:
//   - 0 s: OpenTSDB single (ts 100) vs dense writer 1 (ts 200): dense wins.
//   - 10 s: dense writer 1 vs dense writer 2, both ts 200: writer 2 wins.
//   - 20 s: OpenTSDB single at ts 300 vs dense writer 2 (ts 200): single wins.
//   - 30 s: appends 1 then 3 (ts 50) vs compacted 2 (ts 40): appends' last, 3.
//   - 40.5 s: millisecond single only.
func mixedRow(t *testing.T) ([]Cell, []series.Point) {
	cq, cv, err := AppendCompacted(nil, nil, testBase, []series.Point{series.IntPoint(ms(30000), 2), series.IntPoint(ms(50000), 5)})
	if err != nil {
		t.Fatal(err)
	}
	var app []byte
	app, _ = AppendAppendsPoint(app, 30000, series.IntPoint(0, 1))
	app, _ = AppendAppendsPoint(app, 60000, series.Float32Point(0, 6.5))
	app, _ = AppendAppendsPoint(app, 30000, series.IntPoint(0, 3))
	annot, _ := AppendAnnotationQualifier(nil, 0)
	cells := []Cell{
		singleCell(t, 0, series.IntPoint(0, -1), 100),
		singleCell(t, 20000, series.IntPoint(0, 20), 300),
		{Qualifier: annot, Value: []byte(`{"description":"x"}`), Timestamp: 999},
		{Qualifier: cq, Value: cv, Timestamp: 40},
		{Qualifier: []byte(AppendsQualifier), Value: app, Timestamp: 50},
		singleCell(t, 40500, series.Float64Point(0, 0.25), 10),
		denseCell(t, 1, 7, 200, series.IntPoint(ms(0), 100), series.IntPoint(ms(10000), 110)),
		denseCell(t, 2, 1, 200, series.IntPoint(ms(10000), 210), series.IntPoint(ms(20000), 220), series.Float64Point(ms(70000), 1.5)),
	}
	want := []series.Point{
		series.IntPoint(ms(0), 100),
		series.IntPoint(ms(10000), 210),
		series.IntPoint(ms(20000), 20),
		series.IntPoint(ms(30000), 3),
		series.Float64Point(ms(40500), 0.25),
		series.IntPoint(ms(50000), 5),
		series.Float32Point(ms(60000), 6.5),
		series.Float64Point(ms(70000), 1.5),
	}
	return cells, want
}

func TestRowDecoderMergesEveryFormat(t *testing.T) {
	cells, want := mixedRow(t)
	var d RowDecoder
	r := rand.New(rand.NewPCG(9, 9))
	for round := 0; round < 20; round++ {
		got, err := d.Decode([]series.Point{{T: -5}}, testBase, cells)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[1:], want) || got[0].T != -5 {
			t.Fatalf("round %d:\n got %v\nwant %v", round, got[1:], want)
		}
		// Precedence does not depend on the order cells arrive in.
		r.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
	}
}

func TestRowDecoderReportsCorruptCells(t *testing.T) {
	cells, want := mixedRow(t)
	bad := []Cell{
		{Qualifier: []byte{0x00, 0x00, 0x00, 0x10}, Value: []byte{1, 2, 3, 4}, Timestamp: 1},
		{Qualifier: AppendDenseQualifier(nil, 3, 3), Value: []byte{0x00, 0x05, 0x00, 0xff}, Timestamp: 1},
		{Qualifier: []byte{0x81, 1, 2}, Value: []byte{1}, Timestamp: 1},
	}
	var d RowDecoder
	got, err := d.Decode(nil, testBase, append(cells, bad...))
	if !slices.Equal(got, want) {
		t.Fatalf("good cells lost:\n got %v\nwant %v", got, want)
	}
	var ce *CellError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
	for _, q := range []string{"cell qualifier 00000010: corrupt: Corrupted value", "cell qualifier 800000000300000003", "cell qualifier 810102"} {
		if !strings.Contains(err.Error(), q) {
			t.Errorf("error %q does not name %q", err, q)
		}
	}
	// A single corrupt column alone yields no points and the error.
	got, err = d.Decode(got[:0], testBase, bad[:1])
	if len(got) != 0 || err == nil {
		t.Fatalf("lone corrupt cell: %v %v", got, err)
	}
}

func TestRowDecoderSingleColumnFastPaths(t *testing.T) {
	var d RowDecoder
	pts := regular(360, 10000, func(i int) series.Point { return series.IntPoint(0, int64(i%7)) })
	got, err := d.Decode(nil, testBase, []Cell{denseCell(t, 1, 1, 5, pts...)})
	if err != nil || !slices.Equal(got, pts) {
		t.Fatalf("dense only: %v", err)
	}
	// An unsorted compacted column (hand-made) is sorted, last duplicate winning.
	q := append(append(append([]byte{}, 0x00, 0x20), 0x00, 0x10), 0x00, 0x20)
	got, err = d.Decode(got[:0], testBase, []Cell{{Qualifier: q, Value: []byte{1, 2, 3, 0}}})
	want := []series.Point{series.IntPoint(ms(1000), 2), series.IntPoint(ms(2000), 3)}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("unsorted compacted: %v %v", got, err)
	}
}

func TestRowDecoderZeroAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	cells, _ := mixedRow(t)
	pts := regular(360, 10000, func(i int) series.Point { return series.Float64Point(0, float64(i)/4) })
	one := []Cell{denseCell(t, 1, 1, 5, pts...)}
	var d RowDecoder
	var dst []series.Point
	dst, _ = d.Decode(dst, testBase, cells)
	dst, _ = d.Decode(dst[:0], testBase, one)
	for name, cs := range map[string][]Cell{"mixed": cells, "dense": one} {
		if n := testing.AllocsPerRun(50, func() { dst, _ = d.Decode(dst[:0], testBase, cs) }); n != 0 {
			t.Errorf("%s row: %v allocs per decode", name, n)
		}
	}
	var enc DenseEncoder
	var buf []byte
	buf, _ = enc.Append(buf, testBase, pts)
	if n := testing.AllocsPerRun(50, func() { buf, _ = enc.Append(buf[:0], testBase, pts) }); n != 0 {
		t.Errorf("dense encode: %v allocs", n)
	}
}
