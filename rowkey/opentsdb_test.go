package rowkey

import (
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
)

func unhexT(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexOf(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

func noSalt() Layout {
	l := DefaultLayout()
	l.Salt = salt.None()
	return l
}

var uid1 = []byte{0, 0, 1}

// The worked examples of docs/formats.md (Row keys, Point qualifiers and
// values), byte for byte.
func TestSpecWorkedExamples(t *testing.T) {
	l := noSalt()
	key, err := l.AppendRowKey(nil, uid1, 1356998400*1000, []Tag{{uid1, uid1}})
	if err != nil || hexOf(key) != "00000150E22700000001000001" {
		t.Fatalf("row key %s, %v", hexOf(key), err)
	}
	salted := DefaultLayout()
	key, _ = salted.AppendRowKey(nil, uid1, 1356998400*1000, []Tag{{uid1, uid1}})
	if hexOf(key) != "0800000150E22700000001000001" {
		t.Fatalf("salted row key %s", hexOf(key))
	}
	for _, tc := range []struct {
		off  int64
		p    series.Point
		q, v string
	}{
		{0, series.IntPoint(0, 42), "0000", "2A"},
		{0, series.Float32Point(0, 42.5), "000B", "422A0000"},
		{500, series.IntPoint(0, 42), "F0007D00", "2A"},
		{123000, series.IntPoint(0, 4), "07B0", "04"},
		{0, series.IntPoint(0, 300), "0001", "012C"},
		{0, series.IntPoint(0, -70000), "0003", "FFFEEE90"},
		{0, series.IntPoint(0, 1<<40), "0007", "0000010000000000"},
		{1000, series.Float64Point(0, 42.2), "001F", "404519999999999A"},
	} {
		q, err := AppendQualifier(nil, NewQualifier(tc.off, ValueFlags(tc.p)))
		if err != nil || hexOf(q) != tc.q {
			t.Errorf("qualifier(%d, %v) = %s, %v; want %s", tc.off, tc.p, hexOf(q), err, tc.q)
		}
		if v := AppendValue(nil, tc.p); hexOf(v) != tc.v {
			t.Errorf("value(%v) = %s, want %s", tc.p, hexOf(v), tc.v)
		}
		p, err := ParseSingle(1356998400, q, AppendValue(nil, tc.p))
		want := tc.p
		want.T = 1356998400*1000 + tc.off
		if err != nil || p != want {
			t.Errorf("ParseSingle(%s) = %v, %v; want %v", tc.q, p, err, want)
		}
	}
}

func TestCompactionExample(t *testing.T) {
	var w CompactedWriter
	w.Reset(nil, nil)
	for _, c := range []struct{ q, v string }{{"0007", "0000000000000004"}, {"0017", "0000000000000005"}} {
		q, rest, err := ParseQualifier(unhexT(t, c.q))
		if err != nil || len(rest) != 0 {
			t.Fatal(err)
		}
		if err := w.Add(q, unhexT(t, c.v)); err != nil {
			t.Fatal(err)
		}
	}
	q, v := w.Finish()
	if hexOf(q) != "00070017" || hexOf(v) != "0000000000000004000000000000000500" {
		t.Fatalf("compacted %s / %s", hexOf(q), hexOf(v))
	}
	pts, err := ParseCompacted(nil, 1356998400, q, v)
	if err != nil || len(pts) != 2 || pts[0].Int() != 4 || pts[1].Int() != 5 || pts[1].T != 1356998401000 {
		t.Fatalf("parsed %v, %v", pts, err)
	}
}

func TestCompactedMetaByte(t *testing.T) {
	base := int64(1356998400)
	one := []series.Point{series.IntPoint(base*1000+2000, 7)}
	q, v, err := AppendCompacted(nil, nil, base, one)
	if err != nil || hexOf(q) != "0020" || hexOf(v) != "07" {
		t.Fatalf("single point: %s %s %v", hexOf(q), hexOf(v), err)
	}
	mixed := []series.Point{series.IntPoint(base*1000, 1), series.IntPoint(base*1000+1500, 2)}
	q, v, _ = AppendCompacted(nil, nil, base, mixed)
	if hexOf(q) != "0000F0017700" || hexOf(v) != "010201" {
		t.Fatalf("mixed: %s %s", hexOf(q), hexOf(v))
	}
	ms := []series.Point{series.IntPoint(base*1000+1, 1), series.IntPoint(base*1000+1500, 2)}
	_, v, _ = AppendCompacted(nil, nil, base, ms)
	if hexOf(v) != "010200" {
		t.Fatalf("all ms: meta %s", hexOf(v))
	}
	if _, _, err := AppendCompacted(nil, nil, base, []series.Point{mixed[1], mixed[0]}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unsorted points: %v", err)
	}
}

func TestCompactedCorrupt(t *testing.T) {
	for _, tc := range []struct{ q, v, want string }{
		{"00000010", "0102", "consumed 2 bytes, but was expecting to consume 1"},
		{"00000010", "01", "consumed 2 bytes, but was expecting to consume 0"},
		{"00000017", "0102", "consumed 9 bytes, but was expecting to consume 1"},
		{"0000F000", "010200", "millisecond flag but only 2 bytes"},
		{"0000001B", "01000000000000", "Corrupted value"},
	} {
		_, err := ParseCompacted(nil, 0, unhexT(t, tc.q), unhexT(t, tc.v))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCompacted(%s, %s) = %v, want %q", tc.q, tc.v, err, tc.want)
		}
	}
}

func TestSingleCellFixes(t *testing.T) {
	// fixQualifierFlags: qualifier 0003 with an 8-byte value is read as 0007.
	p, err := ParseSingle(0, unhexT(t, "0003"), unhexT(t, "0000000000000005"))
	if err != nil || p != series.IntPoint(0, 5) {
		t.Fatalf("fixQualifierFlags: %v %v", p, err)
	}
	// The old float bug: flags say 4 bytes, value on 8 with 4 zero bytes.
	p, err = ParseSingle(0, unhexT(t, "000B"), unhexT(t, "00000000422A0000"))
	if err != nil || p != series.Float32Point(0, 42.5) {
		t.Fatalf("float fix: %v %v", p, err)
	}
	_, err = ParseSingle(0, unhexT(t, "000B"), unhexT(t, "00000001422A0000"))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "Corrupted floating point value") {
		t.Fatalf("bad float fix: %v", err)
	}
	// A float flagged 8 bytes but holding 4 is re-flagged float32.
	p, err = ParseSingle(0, unhexT(t, "000F"), unhexT(t, "422A0000"))
	if err != nil || p != series.Float32Point(0, 42.5) {
		t.Fatalf("re-flag float: %v %v", p, err)
	}
	// Millisecond cells are not repaired.
	if _, err = ParseSingle(0, unhexT(t, "F0000003"), unhexT(t, "0000000000000005")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ms cell with wrong length: %v", err)
	}
	for _, v := range []string{"", "010203", "000000000000000000"} {
		if _, err := ParseSingle(0, unhexT(t, "0000"), unhexT(t, v)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("value %q: %v", v, err)
		}
	}
}

func TestQualifierBounds(t *testing.T) {
	for _, q := range []Qualifier{{Offset: -1}, {Offset: 3600000}, {Offset: 1500}, {Offset: 3600000, Ms: true}} {
		if _, err := AppendQualifier(nil, q); !errors.Is(err, ErrInvalid) {
			t.Errorf("AppendQualifier(%+v) = %v", q, err)
		}
	}
	q, _ := AppendQualifier(nil, Qualifier{Offset: 3599999, Ms: true, Flags: 0xF})
	if hexOf(q) != "FDBB9FCF" {
		t.Fatalf("last ms qualifier %s", hexOf(q))
	}
	if _, _, err := ParseQualifier(unhexT(t, "E110")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("second offset 3601: %v", err)
	}
	if _, _, err := ParseQualifier(unhexT(t, "FFFFFFFF")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ms offset beyond the hour: %v", err)
	}
}

func TestAppendsColumn(t *testing.T) {
	base := int64(1356998400)
	var v []byte
	for _, pt := range []struct {
		off int64
		val int64
	}{{5000, 1}, {1000, 2}, {5000, 3}, {2500, 4}} {
		var err error
		if v, err = AppendAppendsPoint(v, pt.off, series.IntPoint(0, pt.val)); err != nil {
			t.Fatal(err)
		}
	}
	if hexOf(v) != "005001"+"001002"+"005003"+"F0027100"+"04" {
		t.Fatalf("appends value %s", hexOf(v))
	}
	pts, err := ParseAppends(nil, base, v)
	want := []series.Point{series.IntPoint(base*1000+1000, 2), series.IntPoint(base*1000+2500, 4), series.IntPoint(base*1000+5000, 3)}
	if err != nil || len(pts) != 3 || pts[0] != want[0] || pts[1] != want[1] || pts[2] != want[2] {
		t.Fatalf("ParseAppends = %v, %v", pts, err)
	}
	if Classify([]byte(AppendsQualifier)) != ColumnAppends {
		t.Fatal("appends qualifier not classified")
	}
	for _, bad := range []string{"0010", "00", "0017000000"} {
		if _, err := ParseAppends(nil, base, unhexT(t, bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseAppends(%s) = %v", bad, err)
		}
	}
}

func TestAnnotationQualifiers(t *testing.T) {
	q, err := AppendAnnotationQualifier(nil, (1292148123-1292148000)*1000)
	if err != nil || hexOf(q) != "01007B" {
		t.Fatalf("annotation qualifier %s %v", hexOf(q), err)
	}
	q, _ = AppendAnnotationQualifier(nil, 123456)
	if hexOf(q) != "010001E240" {
		t.Fatalf("ms annotation qualifier %s", hexOf(q))
	}
	if off, err := ParseAnnotationQualifier(q); err != nil || off != 123456 {
		t.Fatalf("parse: %d %v", off, err)
	}
	h, _ := AppendHistogramQualifier(nil, 2000)
	if hexOf(h) != "060002" || Classify(h) != ColumnHistogram {
		t.Fatalf("histogram qualifier %s", hexOf(h))
	}
	if _, err := ParseAnnotationQualifier(unhexT(t, "01FFFF")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset beyond hour: %v", err)
	}
}

func TestClassify(t *testing.T) {
	for q, want := range map[string]ColumnKind{
		"":                   ColumnOther,
		"0000":               ColumnSingle,
		"F0007D00":           ColumnSingle,
		"00000010":           ColumnCompacted,
		"0000F0007D00":       ColumnCompacted,
		"050000":             ColumnAppends,
		"01007B":             ColumnAnnotation,
		"060002":             ColumnHistogram,
		"800000000100000002": ColumnDense,
		"81":                 ColumnDense,
		"534F4D":             ColumnOther,
	} {
		if got := Classify(unhexT(t, q)); got != want {
			t.Errorf("Classify(%s) = %d, want %d", q, got, want)
		}
	}
}

func TestValueKinds(t *testing.T) {
	for _, p := range []series.Point{
		series.IntPoint(0, math.MinInt64), series.IntPoint(0, -129), series.IntPoint(0, 127),
		series.IntPoint(0, 32768), series.Float64Point(0, math.Inf(-1)),
		{Bits: series.StaleNaN, Kind: series.Float64}, series.Float32Point(0, -0.0),
	} {
		f := ValueFlags(p)
		v := AppendValue(nil, p)
		got, err := DecodeValue(0, f, v)
		if err != nil || got != p {
			t.Errorf("round trip %v: %v %v", p, got, err)
		}
	}
}

// TestMsMarkQualifiers: a point marked Ms on a whole second gets
// OpenTSDB's 4-byte millisecond qualifier (4294967295000 ms, 1695 s into
// its row: F6774600 where the seconds form is 69F0), reading it back marks
// the point, and re-encoding the column (as compaction does) gives the
// same bytes.
func TestMsMarkQualifiers(t *testing.T) {
	base := int64(4294965600)
	pts := []series.Point{series.IntPoint(4294967291000, 2), {T: 4294967295000, Bits: 1, Kind: series.Int, Ms: true}}
	q, v, err := AppendCompacted(nil, nil, base, pts)
	if err != nil || hex.EncodeToString(q) != "69b0f6774600" || hex.EncodeToString(v) != "020101" {
		t.Fatalf("compacted %x %x %v", q, v, err)
	}
	got, err := ParseCompacted(nil, base, q, v)
	if err != nil || len(got) != 2 || got[0] != pts[0] || got[1] != pts[1] {
		t.Fatalf("parsed %+v %v", got, err)
	}
	q2, v2, _ := AppendCompacted(nil, nil, base, got)
	if string(q2) != string(q) || string(v2) != string(v) {
		t.Errorf("re-encoded %x %x", q2, v2)
	}
	single, _ := AppendQualifier(nil, PointQualifier(1695000, pts[1]))
	p, err := ParseSingle(base, single, []byte{1})
	if hex.EncodeToString(single) != "f6774600" || err != nil || p != pts[1] {
		t.Errorf("single %x: %+v %v", single, p, err)
	}
	plain, _ := AppendQualifier(nil, PointQualifier(1695000, series.IntPoint(4294967295000, 1)))
	if hex.EncodeToString(plain) != "69f0" {
		t.Errorf("unmarked whole second: %x", plain)
	}
}
