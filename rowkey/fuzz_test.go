package rowkey

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/series"
)

func FuzzParseRowKey(f *testing.F) {
	l := DefaultLayout()
	key, _ := l.AppendRowKey(nil, uid1, 1356998400000, []Tag{{uid1, uid1}, {[]byte{0, 0, 2}, uid1}})
	f.Add(key)
	f.Add(l.AppendGlobalAnnotationRowKey(nil, 0))
	f.Add([]byte{8, 0, 0, 1, 0x50, 0xE2, 0x27, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := l.ParseRowKey(b)
		if err != nil {
			return
		}
		tsuid := k.AppendTSUID(nil)
		if isZero(k.Metric) {
			return // the global annotation row is never salted
		}
		back, err := l.AppendRowKeyFromTSUID(nil, tsuid, k.BaseMs())
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("rebuilt %x from %x: %v", back, b, err)
		}
	})
}

func FuzzParseQualifier(f *testing.F) {
	for _, s := range []string{"0000", "000B", "F0007D00", "FDBB9FCF", "E110", "F0"} {
		f.Add(unhexT(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, rest, err := ParseQualifier(b)
		if err != nil {
			return
		}
		enc, err := AppendQualifier(nil, q)
		if err != nil {
			t.Fatalf("parsed %+v does not encode: %v", q, err)
		}
		q2, rest2, err := ParseQualifier(append(enc, rest...))
		if err != nil || q2 != q || !bytes.Equal(rest2, rest) || len(enc) != len(b)-len(rest) {
			t.Fatalf("%x: %+v re-encodes to %x (%+v, %v)", b, q, enc, q2, err)
		}
	})
}

func FuzzParseSingle(f *testing.F) {
	f.Add(unhexT(f, "000B"), unhexT(f, "00000000422A0000"))
	f.Add(unhexT(f, "0003"), unhexT(f, "0000000000000005"))
	f.Add(unhexT(f, "F0007D00"), unhexT(f, "2A"))
	f.Fuzz(func(t *testing.T, q, v []byte) {
		p, err := ParseSingle(testBase, q, v)
		if err != nil {
			return
		}
		if p.T < testBase*1000 || p.T >= testBase*1000+RowSpanMs || p.Kind > series.Float64 {
			t.Fatalf("point %+v out of its row", p)
		}
	})
}

// samePoints compares decoded points, treating a float32 NaN as equal to
// itself: widening quiets a signalling NaN, as the JVM does.
func samePoints(a, b []series.Point) bool {
	return slices.EqualFunc(a, b, func(x, y series.Point) bool {
		return x == y || (x.T == y.T && x.Kind == series.Float32 && y.Kind == x.Kind && math.IsNaN(x.Float()) && math.IsNaN(y.Float()))
	})
}

func FuzzParseCompacted(f *testing.F) {
	f.Add(unhexT(f, "00070017"), unhexT(f, "0000000000000004000000000000000500"))
	f.Add(unhexT(f, "0000F0017700"), unhexT(f, "010201"))
	f.Add(unhexT(f, "00000010"), unhexT(f, "0102"))
	f.Fuzz(func(t *testing.T, q, v []byte) {
		pts, err := ParseCompacted(nil, testBase, q, v)
		if err != nil || len(pts) == 0 || !strictlySorted(pts) {
			return
		}
		q2, v2, err := AppendCompacted(nil, nil, testBase, pts)
		if err != nil {
			t.Fatalf("re-encode %v: %v", pts, err)
		}
		var back []series.Point
		if len(pts) == 1 {
			p, err := ParseSingle(testBase, q2, v2)
			back = append(back, p)
			if err != nil {
				t.Fatal(err)
			}
		} else if back, err = ParseCompacted(nil, testBase, q2, v2); err != nil {
			t.Fatal(err)
		}
		if !samePoints(back, pts) {
			t.Fatalf("round trip %v -> %v", pts, back)
		}
	})
}

func FuzzParseAppends(f *testing.F) {
	f.Add(unhexT(f, "005001001002005003F002710004"))
	f.Add(unhexT(f, "0017000000"))
	f.Fuzz(func(t *testing.T, v []byte) {
		pts, err := ParseAppends(nil, testBase, v)
		if err != nil {
			return
		}
		if !strictlySorted(pts) {
			t.Fatalf("unsorted %v", pts)
		}
		var enc []byte
		for _, p := range pts {
			if enc, err = AppendAppendsPoint(enc, p.T-testBase*1000, p); err != nil {
				t.Fatal(err)
			}
		}
		back, err := ParseAppends(nil, testBase, enc)
		if err != nil || !samePoints(back, pts) {
			t.Fatalf("round trip %v -> %v (%v)", pts, back, err)
		}
	})
}

// pointsFromBytes turns fuzz bytes into a valid dense input: each record
// is a time step, a kind and value bits.
func pointsFromBytes(b []byte) []series.Point {
	var pts []series.Point
	t := testBase * 1000
	for len(b) >= 11 && len(pts) < 2000 {
		step := int64(binary.BigEndian.Uint16(b)) + 1
		kind := series.Kind(b[2] % 3)
		bits := binary.BigEndian.Uint64(b[3:])
		b = b[11:]
		if t += step; t >= testBase*1000+RowSpanMs {
			break
		}
		switch kind {
		case series.Float32:
			bits = unRaw32(bits & 0xffffffff)
		case series.Float64:
			if bits&1 == 0 { // favour decimals
				bits = math.Float64bits(float64(int64(bits>>40)-1<<22) / pow10[bits>>1&7])
			}
		}
		pts = append(pts, series.Point{T: t, Bits: bits, Kind: kind})
	}
	return pts
}

func FuzzDenseRoundTrip(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 42}, 30))
	f.Add(bytes.Repeat([]byte{1, 0, 2, 0x7f, 0xf0, 0, 0, 0, 0, 0, 2, 0, 3, 1, 0, 0, 0, 0, 0x40, 0x49, 0x0f, 0xdb}, 20))
	f.Add(bytes.Repeat([]byte{0, 99, 5, 1, 2, 3, 4, 5, 6, 7, 8}, 50))
	var enc DenseEncoder
	var it DenseIter
	f.Fuzz(func(t *testing.T, b []byte) {
		pts := pointsFromBytes(b)
		if len(pts) == 0 {
			return
		}
		v, err := enc.Append(nil, testBase, pts)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		got, err := it.DecodeDense(nil, testBase, v)
		if err != nil || !slices.Equal(got, pts) {
			t.Fatalf("round trip failed: %v\n in %v\nout %v", err, pts, got)
		}
	})
}

func FuzzDenseDecode(f *testing.F) {
	var enc DenseEncoder
	for _, b := range [][]byte{
		bytes.Repeat([]byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 42}, 30),
		bytes.Repeat([]byte{1, 0, 2, 0x7f, 0xf0, 0, 0, 0, 0, 0, 2, 0, 3, 1, 0, 0, 0, 0, 0x40, 0x49, 0x0f, 0xdb}, 20),
	} {
		v, _ := enc.Append(nil, testBase, pointsFromBytes(b))
		f.Add(v)
	}
	f.Add([]byte{0x17, 0x80, 0x80, 0x04, 0, 1})
	var it DenseIter
	f.Fuzz(func(t *testing.T, v []byte) {
		pts, err := it.DecodeDense(nil, testBase, v)
		if err != nil {
			if len(pts) != 0 {
				t.Fatalf("error with %d points", len(pts))
			}
			return
		}
		if len(pts) == 0 || len(pts) > MaxDensePoints || !strictlySorted(pts) {
			t.Fatalf("%d points, sorted %v", len(pts), strictlySorted(pts))
		}
		// What decodes re-encodes and decodes to the same bits.
		v2, err := enc.Append(nil, testBase, pts)
		if err != nil {
			t.Fatalf("decoded points do not encode: %v", err)
		}
		back, err := it.DecodeDense(nil, testBase, v2)
		if err != nil || !slices.Equal(back, pts) {
			t.Fatalf("re-encode round trip: %v", err)
		}
		// The streaming iterator agrees with the bulk decoder.
		it.Reset(testBase, v)
		for i := 0; it.Next(); i++ {
			if it.At() != pts[i] {
				t.Fatalf("iterator point %d = %v, bulk %v", i, it.At(), pts[i])
			}
		}
		if it.Err() != nil {
			t.Fatalf("iterator: %v", it.Err())
		}
	})
}

func FuzzRowDecoder(f *testing.F) {
	f.Add(unhexT(f, "0000"), unhexT(f, "2A"), unhexT(f, "00070017"), unhexT(f, "0000000000000004000000000000000500"), []byte{0x80, 0, 0, 0, 1, 0, 0, 0, 1}, []byte{0x10, 1, 0})
	var d RowDecoder
	f.Fuzz(func(t *testing.T, q1, v1, q2, v2, q3, v3 []byte) {
		cells := []Cell{{Qualifier: q1, Value: v1, Timestamp: 1}, {Qualifier: q2, Value: v2, Timestamp: 2},
			{Qualifier: q3, Value: v3, Timestamp: 2}}
		pts, _ := d.Decode(nil, testBase, cells)
		if !strictlySorted(pts) {
			t.Fatalf("unsorted %v", pts)
		}
	})
}
