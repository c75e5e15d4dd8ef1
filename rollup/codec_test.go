package rollup

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQualifierOpenTSDB takes the bytes of OpenTSDB's
// TestRollupUtils.buildRollupQualifier* cases (aggregator 42, flags 7)
// and a few computed by its rule.
func TestQualifierOpenTSDB(t *testing.T) {
	for _, tc := range []struct {
		interval, span string
		ts, base       int64
		agg            int
		flags          rowkey.Flags
		want           string
	}{
		{"1s", "1h", 1370530800, 1370530800, 42, 7, "2a0007"},
		{"1s", "1h", 1370532925, 1370530800, 42, 7, "2a84d7"},
		{"1s", "1h", 1370534399, 1370530800, 42, 7, "2ae0f7"},
		{"30s", "1h", 1370532925, 1370530800, 42, 7, "2a0467"},    // index 70
		{"1h", "1d", 1370532925, 1370476800, 0, 1, "0000f1"},      // index 15, int on 2 bytes
		{"1d", "1n", 1370532925, 1370044800, 3, 0xB, "03005b"},    // index 5, float32
		{"10m", "1d", 1370563199, 1370476800, 127, 0xF, "7f08ff"}, // index 143, float64
	} {
		iv := mustInterval(t, tc.interval, tc.span)
		if b := iv.BaseTime(tc.ts); b != tc.base {
			t.Fatalf("base %d, want %d", b, tc.base)
		}
		idx := iv.Index(tc.base, tc.ts)
		q, err := AppendQualifier(nil, tc.agg, idx, tc.flags)
		if err != nil || hex.EncodeToString(q) != tc.want {
			t.Errorf("%s/%s %d: %x %v, want %s", tc.interval, tc.span, tc.ts, q, err, tc.want)
			continue
		}
		pq, err := ParseQualifier(q)
		if err != nil || pq.AggID != tc.agg || pq.Index != idx || pq.Flags != tc.flags || pq.AggName != nil {
			t.Errorf("ParseQualifier(%x) = %+v %v", q, pq, err)
		}
	}
	if _, err := AppendQualifier(nil, 128, 0, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("aggregator 128: %v", err)
	}
	if _, err := AppendQualifier(nil, 0, MaxIndex+1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("index 4096: %v", err)
	}
}

func TestLegacyQualifier(t *testing.T) {
	q := AppendLegacyQualifier(nil, "sum", 2, 1)
	if hex.EncodeToString(q) != "73756d3a0021" {
		t.Fatalf("legacy %x", q)
	}
	pq, err := ParseQualifier(q)
	if err != nil || pq.AggID != -1 || string(pq.AggName) != "sum" || pq.Index != 2 || pq.Flags != 1 {
		t.Errorf("%+v %v", pq, err)
	}
	// The millisecond form: offset 5000 ms reads as index 5.
	ms := append([]byte("max:"), 0xF0, 0x04, 0xE2, 0x07)
	if pq, err := ParseQualifier(ms); err != nil || pq.Index != 5 || pq.Flags != 7 || string(pq.AggName) != "max" {
		t.Errorf("ms legacy: %+v %v", pq, err)
	}
	for _, bad := range []string{"", "80000f", "0000", "SUM:0021", "sum:0", "sum:002100", "sum0021"} {
		if _, err := ParseQualifier(unhexOrRaw(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
}

func unhexOrRaw(s string) []byte {
	if b, err := hex.DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// TestColumnsOpenTSDB checks the columns of one computed cell against
// bytes computed by OpenTSDB's rules: 1h-in-1d row, cell index 15 at
// 2013-06-06T15:00Z, id sum 0, count 1, min 2, max 3.
func TestColumnsOpenTSDB(t *testing.T) {
	iv := DefaultConfig().Intervals[1]
	ids := DefaultConfig().IDs()
	base := int64(1370476800)
	pts := []series.Point{
		series.IntPoint(1370530800000, 100),
		series.IntPoint(1370530810000, 200),
		series.IntPoint(1370534399000, -5),
	}
	cells := Fold(nil, &iv, base, pts)
	if len(cells) != 1 || cells[0].T != 1370530800000 || cells[0].Count != 3 {
		t.Fatalf("cells %+v", cells)
	}
	want := []struct{ q, v string }{
		{"0000f1", "0127"}, // sum 295 on 2 bytes
		{"0100f0", "03"},   // count 3
		{"0200f0", "fb"},   // min -5
		{"0300f1", "00c8"}, // max 200 on 2 bytes
	}
	for a := range NumAggs {
		q, v, ok, err := AppendColumn(nil, nil, &ids, a, &iv, base, &cells[0])
		if err != nil || !ok || hex.EncodeToString(q) != want[a].q || hex.EncodeToString(v) != want[a].v {
			t.Errorf("%s: %x %x %v %v, want %s %s", a, q, v, ok, err, want[a].q, want[a].v)
		}
		pq, p, err := ParseColumn(&iv, base, q, v)
		if err != nil || pq.AggID != int(a) || p != cells[0].Value(a) {
			t.Errorf("%s: ParseColumn %+v %+v %v", a, pq, p, err)
		}
	}
	// A float cell: sum as float64 on 8 bytes, min float32 on 4.
	cells = Fold(cells[:0], &iv, base, []series.Point{series.Float32Point(1370530800000, 1.5), series.IntPoint(1370530801000, 2)})
	q, v, _, _ := AppendColumn(nil, nil, &ids, Sum, &iv, base, &cells[0])
	if hex.EncodeToString(q) != "0000ff" || hex.EncodeToString(v) != "400c000000000000" {
		t.Errorf("float sum %x %x", q, v)
	}
	q, v, _, _ = AppendColumn(nil, nil, &ids, Min, &iv, base, &cells[0])
	if hex.EncodeToString(q) != "0200fb" || hex.EncodeToString(v) != "3fc00000" {
		t.Errorf("float32 min %x %x", q, v)
	}
	// An id not configured writes nothing.
	none := AggIDs{-1, -1, -1, -1}
	if _, _, ok, err := AppendColumn(nil, nil, &none, Sum, &iv, base, &cells[0]); ok || err != nil {
		t.Error("unconfigured aggregator")
	}
	// OpenTSDB's old 8-byte float repair applies to rollup columns too.
	if _, p, err := ParseColumn(&iv, base, unhex(t, "0000fb"), unhex(t, "000000003fc00000")); err != nil || p.Float() != 1.5 {
		t.Errorf("repaired float: %v %v", p, err)
	}
	if _, _, err := ParseColumn(&iv, base, unhex(t, "000180"), unhex(t, "01")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("index 24 of a day: %v", err)
	}
}

func TestSetBaseTime(t *testing.T) {
	s, err := salt.New(1, 20)
	if err != nil {
		t.Fatal(err)
	}
	l := rowkey.Layout{Salt: s}
	l.EnsureDefaults()
	tags := []rowkey.Tag{{Key: unhex(t, "000001"), Value: unhex(t, "000001")}}
	key, err := l.AppendRowKey(nil, unhex(t, "000001"), 1356998400000+7200000, tags)
	if err != nil {
		t.Fatal(err)
	}
	SetBaseTime(&l, key, 1356998400)
	if hex.EncodeToString(key) != "0800000150e22700000001000001" {
		t.Errorf("rollup key %x", key)
	}
}

func TestFold(t *testing.T) {
	iv := DefaultConfig().Intervals[1] // 1h in 1d
	base := int64(1370476800)
	h := int64(3600_000)
	b := base * 1000
	nan := math.NaN()
	pts := []series.Point{
		series.IntPoint(b, 5),
		series.IntPoint(b+1000, math.MaxInt64),                      // overflows: sum becomes float
		series.Float64Point(b+h, nan),                               // NaN loses to numbers in min/max
		series.Float64Point(b+h+1, 2.5),                             //
		{T: b + h + 2, Bits: series.StaleNaN, Kind: series.Float64}, // not a point
		series.IntPoint(b+3*h+999, -7),
		series.IntPoint(b+3*h+1000, 7),
	}
	cells := Fold(nil, &iv, base, pts)
	if len(cells) != 3 {
		t.Fatalf("%d cells: %+v", len(cells), cells)
	}
	c := cells[0]
	if c.T != b || c.Count != 2 || c.Sum.Kind != series.Float64 || c.Sum.Float() != 5+float64(math.MaxInt64) ||
		c.Min != series.IntPoint(b, 5) || c.Max != series.IntPoint(b, math.MaxInt64) {
		t.Errorf("cell 0 %+v", c)
	}
	c = cells[1]
	if c.T != b+h || c.Count != 2 || !math.IsNaN(c.Sum.Float()) || c.Min.Float() != 2.5 || c.Max.Float() != 2.5 {
		t.Errorf("cell 1 %+v", c)
	}
	c = cells[2]
	if c.T != b+3*h || c.Count != 2 || c.Sum != series.IntPoint(b+3*h, 0) || c.Min.Int() != -7 || c.Max.Int() != 7 {
		t.Errorf("cell 3 %+v", c)
	}
	// All NaN: NaN min and max.
	only := Fold(nil, &iv, base, []series.Point{series.Float64Point(b, nan)})
	if !math.IsNaN(only[0].Min.Float()) || !math.IsNaN(only[0].Max.Float()) {
		t.Errorf("all-NaN cell %+v", only[0])
	}
	// Folding the hours into the day equals folding the points directly.
	day := DefaultConfig().Intervals[2]
	dbase := day.BaseTime(base)
	direct := Fold(nil, &day, dbase, pts[5:])
	hours := Fold(nil, &iv, base, pts[5:])
	folded := FoldCells(nil, &day, dbase, hours)
	if len(direct) != 1 || len(folded) != 1 || direct[0] != folded[0] {
		t.Errorf("direct %+v, folded %+v", direct, folded)
	}
}

// TestPackedRoundTrip: a day of hour cells (one without a point at its
// start, one missing, floats of both widths, negative integers) packs
// into a version 03 row and reads back the same, as the version 02 row
// tsd wrote before does; a cell that does not know its first point keeps
// EdgeUnknown in version 03, and a version 01 row's cells all read back
// with it.
func TestPackedRoundTrip(t *testing.T) {
	iv := DefaultConfig().Intervals[1]
	base := int64(1370476800)
	var pts []series.Point
	for i := range int64(24 * 360) {
		if i%360 == 0 && i/360 == 5 {
			continue // hour 5 loses its first point
		}
		if i/360 == 9 {
			continue // hour 9 has none
		}
		p := series.IntPoint((base+i*10)*1000, i%97)
		switch i / 360 {
		case 20:
			p = series.Float64Point(p.T, float64(i)/3)
		case 21:
			p = series.Float32Point(p.T, float32(i)/4)
		case 22:
			p = series.IntPoint(p.T, -i*1e9)
		}
		pts = append(pts, p)
	}
	cells := Fold(nil, &iv, base, pts)
	var enc RowEncoder
	var dec RowDecoder
	var old denseRowEncoder
	v, err := enc.Append(nil, &iv, base, cells)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := old.Append(nil, &iv, base, cells)
	if err != nil || v2[0] != 2 {
		t.Fatalf("version 02 row %x: %v", v2[:1], err)
	}
	for _, row := range [][]byte{v, v2} {
		got, err := dec.Decode(nil, &iv, base, row)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 23 || len(got) != len(cells) {
			t.Fatalf("version %d: %d cells back, want %d", row[0], len(got), len(cells))
		}
		for i := range got {
			if got[i] != cells[i] {
				t.Errorf("version %d cell %d: %+v, want %+v", row[0], i, got[i], cells[i])
			}
		}
	}
	t.Logf("23 hour cells of 360 points: %d bytes packed (version 02: %d)", len(v), len(v2))
	if v[0] != 3 || len(v) > 600 {
		t.Errorf("version %d, %d bytes", v[0], len(v))
	}
	if cells[0].Edge != EdgePoint || cells[5].Edge != EdgeNone || cells[19].Sum.Kind != series.Float64 || cells[20].Min.Kind != series.Float32 || cells[21].Min.Int() >= 0 {
		t.Errorf("the test's cells lack a case: %+v %+v %+v %+v", cells[0], cells[5], cells[19], cells[20])
	}
	cells[3].Edge, cells[3].First = EdgeUnknown, series.Point{}
	v3, err := enc.Append(nil, &iv, base, cells)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := old.Append(nil, &iv, base, cells)
	if err != nil || v1[0] != 1 {
		t.Fatalf("version 01 row %x: %v", v1[:1], err)
	}
	for _, row := range [][]byte{v3, v1} {
		got, err := dec.Decode(nil, &iv, base, row)
		if err != nil || len(got) != len(cells) {
			t.Fatalf("version %d: %d cells, %v", row[0], len(got), err)
		}
		for i := range got {
			want := cells[i]
			if row[0] == 1 {
				want.Edge, want.First = EdgeUnknown, series.Point{}
			}
			if got[i] != want {
				t.Errorf("version %d cell %d: %+v, want %+v", row[0], i, got[i], want)
			}
		}
	}
	// Corruptions are errors, never panics.
	for _, bad := range [][]byte{nil, {2}, {3}, {4}, {3, 1, 24, 1}, v[:len(v)-1], append(bytes.Clone(v), 0), v2[:len(v2)-1]} {
		if _, err := dec.Decode(nil, &iv, base, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %v", bad, err)
		}
	}
	if _, err := enc.Append(nil, &iv, base, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("no cells: %v", err)
	}
	if _, err := enc.Append(nil, &iv, base, []Cell{{T: (base + 1) * 1000, Count: 1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("misaligned cell: %v", err)
	}
	if _, err := enc.Append(nil, &iv, base, []Cell{cells[1], cells[0]}); !errors.Is(err, ErrInvalid) {
		t.Errorf("cells out of order: %v", err)
	}
}

func TestChoose(t *testing.T) {
	c, err := ParseConfig([]byte(`{"aggregationIds":{"sum":0},"intervals":[` +
		`{"table":"tsdb","preAggregationTable":"pre","interval":"1m","rowSpan":"1h","defaultInterval":true},` +
		`{"table":"r10m","preAggregationTable":"p10m","interval":"10m","rowSpan":"1d"},` +
		`{"table":"r1h","preAggregationTable":"p1h","interval":"1h","rowSpan":"1d"},` +
		`{"table":"r1d","preAggregationTable":"p1d","interval":"1d","rowSpan":"1n"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ivs []*Interval) (s []string) {
		for _, iv := range ivs {
			s = append(s, iv.Name)
		}
		return s
	}
	for _, tc := range []struct {
		ds     int64
		cands  string
		choose string
	}{
		{86400, "[1d 1h 10m 1m]", "1d"},
		{7200, "[1h 10m 1m]", "1h"},
		{1800, "[10m 1m]", "10m"},
		{300, "[1m]", ""},
		{30, "[]", ""},
		{0, "[]", ""},
	} {
		got := names(c.Candidates(nil, tc.ds))
		if fmtList(got) != tc.cands {
			t.Errorf("Candidates(%d) = %v, want %s", tc.ds, got, tc.cands)
		}
		iv := c.Choose(tc.ds, NoFallback)
		if (iv == nil && tc.choose != "") || (iv != nil && iv.Name != tc.choose) {
			t.Errorf("Choose(%d) = %v, want %q", tc.ds, iv, tc.choose)
		}
	}
	if c.Choose(86400, Raw) != nil {
		t.Error("ROLLUP_RAW chose a rollup")
	}
	for s, want := range map[string]Usage{"rollup_raw": Raw, "ROLLUP_FALLBACK": Fallback, "Rollup_Fallback_Raw": FallbackRaw, "ROLLUP_NOFALLBACK": NoFallback} {
		if u, ok := ParseUsage(s); !ok || u != want || !bytes.EqualFold([]byte(u.String()), []byte(s)) {
			t.Errorf("ParseUsage(%s) = %v %v", s, u, ok)
		}
	}
	if u, ok := ParseUsage("bogus"); ok || u != NoFallback || u.Fallback() || !FallbackRaw.Fallback() {
		t.Error("unknown usage or Fallback")
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

func TestCellColumn(t *testing.T) {
	iv := DefaultConfig().Intervals[1]
	base := int64(1370476800)
	cells := Fold(nil, &iv, base, []series.Point{
		series.IntPoint(base*1000, 100), series.IntPoint(base*1000+1000, -300),
		series.Float32Point(base*1000+3600_000, 1.5), series.Float64Point(base*1000+3601_000, 0.1),
		series.IntPoint(base*1000+7201_000, 7),
	})
	if cells[0].Edge != EdgePoint || cells[0].First != series.IntPoint(base*1000, 100) ||
		cells[1].Edge != EdgePoint || cells[1].First != series.Float32Point(base*1000+3600_000, 1.5) ||
		cells[2].Edge != EdgeNone {
		t.Fatalf("first points %+v", cells)
	}
	q, err := AppendCellQualifier(nil, 15)
	if err != nil || hex.EncodeToString(q) != "fd000f" {
		t.Fatalf("qualifier %x %v", q, err)
	}
	if idx, ok := ParseCellQualifier(q); !ok || idx != 15 {
		t.Errorf("ParseCellQualifier %d %v", idx, ok)
	}
	for _, bad := range []string{"fd", "fc000f", "fd000f00", "00000f"} {
		if _, ok := ParseCellQualifier(unhex(t, bad)); ok {
			t.Errorf("%s parsed as a cell qualifier", bad)
		}
	}
	// Integers: header 80 (a first point), count 2, sum -200, min -300,
	// max 100 as zigzag varints, then the first point: kind 00, 100.
	v := AppendCellValue(nil, &cells[0])
	if hex.EncodeToString(v) != "80028f03d704c80100c801" {
		t.Errorf("int cell value %x", v)
	}
	// No point at the start: header 40, nothing after max.
	if v := AppendCellValue(nil, &cells[2]); hex.EncodeToString(v) != "40010e0e0e" {
		t.Errorf("int cell value without a first point %x", v)
	}
	// A float32 first point: kind 01 and 4 bytes.
	if v := AppendCellValue(nil, &cells[1]); hex.EncodeToString(v) != "9a023ff999999999999a3fb999999999999a3fc00000013fc00000" {
		t.Errorf("float cell value %x", v)
	}
	// A value written before cells kept their first point (header bits
	// 6-7 zero) decodes with the aggregates and EdgeUnknown.
	old, err := ParseCellValue(cells[0].T, unhex(t, "00028f03d704c801"))
	want := cells[0]
	want.Edge, want.First = EdgeUnknown, series.Point{}
	if err != nil || old != want {
		t.Errorf("old cell value: %+v %v, want %+v", old, err, want)
	}
	if v := AppendCellValue(nil, &want); hex.EncodeToString(v) != "00028f03d704c801" {
		t.Errorf("cell with no first point known %x", v)
	}
	for _, bad := range []string{"c0028f03d704c801", "80028f03d704c801", "80028f03d704c80103c801", "80028f03d704c80102c801"} {
		if _, err := ParseCellValue(0, unhex(t, bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, c := range cells {
		v := AppendCellValue(nil, &c)
		got, err := ParseCellValue(c.T, v)
		if err != nil || got != c {
			t.Errorf("round trip %+v: %+v %v (%x)", c, got, err, v)
		}
		for i := range len(v) {
			if _, err := ParseCellValue(c.T, v[:i]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%x cut at %d: %v", v, i, err)
			}
		}
	}
	if _, err := ParseCellValue(0, append(AppendCellValue(nil, &cells[0]), 0)); !errors.Is(err, ErrCorrupt) {
		t.Error("trailing byte accepted")
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = ParseCellValue(0, v) }); n != 0 {
		t.Errorf("ParseCellValue: %v allocations", n)
	}
}

// TestFoldFastPath: Fold (with its integer fast path) equals the plain
// fold through Cell.add on random rows of integers near the overflow
// bounds, floats, NaNs and staleness markers.
func TestFoldFastPath(t *testing.T) {
	iv := Interval{Name: "10m", Seconds: 600, Count: 6}
	base := int64(1370530800)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		var pts []series.Point
		for tm := base * 1000; tm < (base+3600)*1000; tm += 1000 * (1 + rng.Int64N(400)) {
			switch rng.IntN(8) {
			case 0:
				pts = append(pts, series.Float64Point(tm, rng.NormFloat64()))
			case 1:
				pts = append(pts, series.IntPoint(tm, math.MaxInt64-rng.Int64N(3)))
			case 2:
				pts = append(pts, series.IntPoint(tm, math.MinInt64+rng.Int64N(3)))
			case 3:
				pts = append(pts, series.Float64Point(tm, math.NaN()))
			case 4:
				pts = append(pts, series.Point{T: tm, Kind: series.Float64, Bits: series.StaleNaN})
			default:
				pts = append(pts, series.IntPoint(tm, rng.Int64N(200)-100))
			}
		}
		var want []Cell
		cur := -1
		for _, p := range pts {
			if p.IsStale() {
				continue
			}
			idx := iv.Index(base, p.T/1000)
			if idx != cur {
				want = append(want, Cell{T: iv.CellStart(base, idx), Edge: EdgeNone})
				cur = idx
				if p.T == want[len(want)-1].T {
					want[len(want)-1].Edge, want[len(want)-1].First = EdgePoint, p
				}
			}
			want[len(want)-1].add(p, p, p, 1)
		}
		got := Fold(nil, &iv, base, pts)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d:\n got %v\nwant %v", round, got, want)
		}
	}
}

// TestPackedBytes pins a version 03 packed row and the version 02 row
// tsd wrote before for the same cells: two hours, the first with a point
// at its start (1), the third without.
func TestPackedBytes(t *testing.T) {
	iv := DefaultConfig().Intervals[1]
	base := int64(1370476800)
	cells := Fold(nil, &iv, base, []series.Point{
		series.IntPoint(base*1000, 1), series.IntPoint(base*1000+1000, 3), series.Float64Point(base*1000+7201000, 2.5),
	})
	// Version 03: two cells; index runs (0, 1 cell) and (1 skipped, 1
	// cell); shape runs (80: integers, a first point; 00: an integer
	// one; 1 cell) and (6a: float64s, no first point; 1 cell); then
	// count 2, sum 4, min 1, max 3, first 1 as zigzag deltas, count -1
	// and the float64s 2.5.
	const want = "03" + "02" + "0001" + "0101" + "800001" + "6a0001" +
		"0408020602" + "01" + "4004000000000000" + "4004000000000000" + "4004000000000000"
	// Version 02 as tsd wrote it: sum, count, min, max and first, each a
	// uvarint length and a dense column (of the coder's start at 2^23: the
	// columns' header bit 5 clear).
	const want2 = "02" +
		"15170200020100028004008004020150000f080004010710020002" +
		"04000115170200020100028004008004020114000f08000402" +
		"1517020002010002800400800402013c000804000401" +
		"0410010002"
	var enc RowEncoder
	v, err := enc.Append(nil, &iv, base, cells)
	if err != nil || hex.EncodeToString(v) != want {
		t.Fatalf("packed %x %v, want %s", v, err, want)
	}
	// The test encoder of version 02 now writes its columns with bit 5.
	var old denseRowEncoder
	v2, err := old.Append(nil, &iv, base, cells)
	if err != nil {
		t.Fatal(err)
	}
	var dec RowDecoder
	for _, row := range []string{want, want2, hex.EncodeToString(v2)} {
		got, err := dec.Decode(nil, &iv, base, unhex(t, row))
		if err != nil || len(got) != 2 || got[0] != cells[0] || got[1] != cells[1] {
			t.Fatalf("decoded %+v %v, want %+v", got, err, cells)
		}
		if got[0].Edge != EdgePoint || got[0].First != series.IntPoint(base*1000, 1) || got[1].Edge != EdgeNone {
			t.Errorf("first points %+v", got)
		}
	}
}

// TestFoldFirstPoint: a cell's first point is the point at its start, not
// a staleness marker; a day folded from hours takes its first hour's when
// that hour starts the day, and has none when its first hour starts
// later.
func TestFoldFirstPoint(t *testing.T) {
	hour, day := DefaultConfig().Intervals[1], DefaultConfig().Intervals[2]
	base := int64(1370476800) // a UTC midnight
	stale := series.Point{T: base * 1000, Kind: series.Float64, Bits: series.StaleNaN}
	for _, tc := range []struct {
		name string
		pts  []series.Point
		want Cell // Edge and First of the day
	}{
		{"at start", []series.Point{series.IntPoint(base*1000, 4), series.IntPoint(base*1000+5000, 5)},
			Cell{Edge: EdgePoint, First: series.IntPoint(base*1000, 4)}},
		{"float at start", []series.Point{series.Float64Point(base*1000, 0.5), series.IntPoint(base*1000+3600_000, 5)},
			Cell{Edge: EdgePoint, First: series.Float64Point(base*1000, 0.5)}},
		{"after start", []series.Point{series.IntPoint(base*1000+1000, 4)}, Cell{Edge: EdgeNone}},
		{"stale at start", []series.Point{stale, series.IntPoint(base*1000+1000, 4)}, Cell{Edge: EdgeNone}},
		{"second hour", []series.Point{series.IntPoint(base*1000+3600_000, 4)}, Cell{Edge: EdgeNone}},
	} {
		hours := Fold(nil, &hour, base, tc.pts)
		direct := Fold(nil, &day, base, tc.pts)
		folded := FoldCells(nil, &day, base, hours)
		if len(direct) != 1 || len(folded) != 1 || direct[0] != folded[0] {
			t.Errorf("%s: direct %+v, folded %+v", tc.name, direct, folded)
			continue
		}
		if folded[0].Edge != tc.want.Edge || folded[0].First != tc.want.First {
			t.Errorf("%s: edge %d first %+v, want %d %+v", tc.name, folded[0].Edge, folded[0].First, tc.want.Edge, tc.want.First)
		}
	}
	// A first hour decoded from an older encoding leaves the day's first
	// point unknown when it starts the day, and none when it starts later.
	for _, h := range []int64{0, 3600_000} {
		old := Fold(nil, &hour, base, []series.Point{series.IntPoint(base*1000+h, 4)})
		old[0].Edge, old[0].First = EdgeUnknown, series.Point{}
		want := EdgeUnknown
		if h > 0 {
			want = EdgeNone
		}
		if got := FoldCells(nil, &day, base, old); got[0].Edge != want {
			t.Errorf("old hour at +%d ms: edge %d, want %d", h, got[0].Edge, want)
		}
	}
}
