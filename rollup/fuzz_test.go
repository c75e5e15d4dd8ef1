package rollup

import (
	"testing"

	"github.com/tsd-db/tsd/series"
)

// FuzzParseConfig: any document either parses into a configuration that
// passes Validate and round-trips, or fails with a *ConfigError.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(DefaultConfigJSON))
	f.Add([]byte(`{"aggregationIds":{"sum":0},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"2h"}]}`))
	f.Add([]byte(`{"aggregationIds":{"sum":200},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1s","rowSpan":"1y"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := ParseConfig(doc)
		if err != nil {
			if _, ok := err.(*ConfigError); !ok {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			return
		}
		for i := range c.Intervals {
			iv := &c.Intervals[i]
			if iv.Count < MinIntervals || iv.Count > MaxIntervals || iv.Seconds < 1 {
				t.Fatalf("accepted %+v", iv)
			}
			if base := iv.BaseTime(1370532925); base > 1370532925 || iv.NextBase(base) <= 1370532925 {
				t.Fatalf("%s: base %d next %d", iv.Name, base, iv.NextBase(base))
			}
		}
	})
}

// FuzzParseQualifier: no input panics, and a parsed 3-byte qualifier
// encodes back to itself.
func FuzzParseQualifier(f *testing.F) {
	f.Add([]byte{0x2a, 0x84, 0xd7})
	f.Add([]byte("sum:\x00\x21"))
	f.Add([]byte("max:\xf0\x04\xe2\x07"))
	f.Fuzz(func(t *testing.T, q []byte) {
		pq, err := ParseQualifier(q)
		if err != nil || pq.AggID < 0 {
			return
		}
		back, err := AppendQualifier(nil, pq.AggID, pq.Index, pq.Flags)
		if err != nil || string(back) != string(q) {
			t.Fatalf("%x -> %+v -> %x %v", q, pq, back, err)
		}
	})
}

// FuzzPackedRow: no packed value of any version panics the decoder, and
// what decodes encodes back (as version 03) to cells that decode the
// same.
func FuzzPackedRow(f *testing.F) {
	iv := DefaultConfig().Intervals[1]
	base := int64(1370476800)
	var enc RowEncoder
	cells := Fold(nil, &iv, base, []series.Point{series.IntPoint(base*1000, 1), series.Float64Point(base*1000+7200000, 2.5)})
	v, _ := enc.Append(nil, &iv, base, cells)
	f.Add(v)
	var dense denseRowEncoder // versions 01 and 02, which stores hold
	v2, _ := dense.Append(nil, &iv, base, cells)
	f.Add(v2)
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, value []byte) {
		var dec RowDecoder
		got, err := dec.Decode(nil, &iv, base, value)
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatal("decoded no cells without an error")
		}
		v2, err := enc.Append(nil, &iv, base, got)
		if err != nil {
			t.Fatalf("decoded cells do not encode: %v", err)
		}
		again, err := dec.Decode(nil, &iv, base, v2)
		if err != nil || len(again) != len(got) {
			t.Fatalf("re-decode: %v", err)
		}
		for i := range got {
			if got[i] != again[i] {
				t.Fatalf("cell %d: %+v != %+v", i, got[i], again[i])
			}
		}
	})
}

// FuzzCellValue: no cell value panics the decoder, and what decodes
// encodes to a value that decodes the same.
func FuzzCellValue(f *testing.F) {
	f.Add([]byte{0, 2, 0x8f, 3, 0xd7, 4, 0xc8, 1})
	f.Add([]byte{0x2a, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		c, err := ParseCellValue(0, v)
		if err != nil {
			return
		}
		back := AppendCellValue(nil, &c)
		if again, err := ParseCellValue(0, back); err != nil || again != c {
			t.Fatalf("%x -> %+v -> %x -> %+v %v", v, c, back, again, err)
		}
	})
}
