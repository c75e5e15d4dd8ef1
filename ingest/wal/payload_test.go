package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

type sample struct {
	ref uint64
	p   series.Point
}

func encodeSamples(ss []sample) []byte {
	var e SamplesEncoder
	var b []byte
	for _, s := range ss {
		b = e.Append(b, s.ref, s.p)
	}
	return b
}

func decodeSamples(b []byte) ([]sample, error) {
	var d SamplesDecoder
	d.Reset(b)
	var out []sample
	for {
		ref, p, ok := d.Next()
		if !ok {
			return out, d.Err()
		}
		out = append(out, sample{ref, p})
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	ss := []sample{
		{7, series.IntPoint(1_700_000_000_000, -5)},
		{3, series.Float64Point(1_700_000_000_000, 1.5)},
		{3, series.Float32Point(1_699_999_999_000, 0.25)},
		{1 << 40, series.IntPoint(0, math.MinInt64)},
		{2, series.Point{T: math.MaxInt64, Bits: series.StaleNaN, Kind: series.Float64}},
	}
	b := encodeSamples(ss)
	got, err := decodeSamples(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ss) {
		t.Fatalf("decoded %d samples, want %d", len(got), len(ss))
	}
	for i := range ss {
		if got[i] != ss[i] {
			t.Errorf("sample %d: got %+v, want %+v", i, got[i], ss[i])
		}
	}
}

// TestSamplesBytes pins the byte format of doc.go.
func TestSamplesBytes(t *testing.T) {
	b := encodeSamples([]sample{{1, series.IntPoint(10, 3)}, {1, series.Float32Point(10, 1)}})
	want := []byte{
		0x02 << 2, 20, 6, // id +1, kind int; T +10; value 3
		0x00<<2 | 1, 0, 0, 0, 0x80, 0x3f, // id +0, kind float32; T +0; 1.0f
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("got % x, want % x", b, want)
	}
}

func TestSamplesDecodeErrors(t *testing.T) {
	for name, b := range map[string][]byte{
		"kind 3":        {0x03},
		"no timestamp":  {0x00},
		"short float64": {0x02, 0x00, 1, 2, 3},
		"short float32": {0x01, 0x00, 1},
		"bad varint":    {0x80},
	} {
		if _, err := decodeSamples(b); !errors.Is(err, ErrCorruptRecord) {
			t.Errorf("%s: err = %v, want ErrCorruptRecord", name, err)
		}
	}
}

func TestSeriesRoundTrip(t *testing.T) {
	var b []byte
	b = AppendSeries(b, 1, []byte{0, 0, 1, 0, 0, 2, 0, 0, 3})
	b = AppendSeries(b, 300, nil)
	var d SeriesDecoder
	d.Reset(b)
	ref, key, ok := d.Next()
	if !ok || ref != 1 || !bytes.Equal(key, []byte{0, 0, 1, 0, 0, 2, 0, 0, 3}) {
		t.Fatalf("first entry: %d % x %v", ref, key, ok)
	}
	ref, key, ok = d.Next()
	if !ok || ref != 300 || len(key) != 0 {
		t.Fatalf("second entry: %d % x %v", ref, key, ok)
	}
	if _, _, ok := d.Next(); ok || d.Err() != nil {
		t.Fatalf("end: ok=%v err=%v", ok, d.Err())
	}
	d.Reset([]byte{1, 5, 0})
	if _, _, ok := d.Next(); ok || !errors.Is(d.Err(), ErrCorruptRecord) {
		t.Fatalf("short key: ok=%v err=%v", ok, d.Err())
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, prev := range []int64{-1, 0, 123456789} {
		seg, p, err := ParseHeader(AppendHeader(nil, 42, prev))
		if err != nil || seg != 42 || p != prev {
			t.Errorf("prev %d: got seg %d prev %d err %v", prev, seg, p, err)
		}
	}
	if _, _, err := ParseHeader([]byte{2, 1, 0}); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("bad version: err = %v", err)
	}
}

func TestRecordFraming(t *testing.T) {
	b := AppendRecord([]byte("x"), TypeSamples, []byte("abc"))
	rec := b[1:]
	if n := binary.LittleEndian.Uint32(rec); n != 3 || rec[8] != byte(TypeSamples) {
		t.Fatalf("framing % x", rec)
	}
	if !checksumOK(rec, rec[HeaderSize:]) {
		t.Fatal("checksum does not verify")
	}
	rec[HeaderSize] ^= 1
	if checksumOK(rec, rec[HeaderSize:]) {
		t.Fatal("checksum verifies a flipped bit")
	}
}

func FuzzSamples(f *testing.F) {
	f.Add(encodeSamples([]sample{{1, series.IntPoint(10, 3)}, {9, series.Float64Point(5, -2.5)}}))
	f.Add([]byte{0x03})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeSamples(b)
		if err != nil {
			return
		}
		again, err := decodeSamples(encodeSamples(got))
		if err != nil || len(again) != len(got) {
			t.Fatalf("re-decode: %v, %d vs %d samples", err, len(again), len(got))
		}
		for i := range got {
			if again[i] != got[i] {
				t.Fatalf("sample %d: %+v then %+v", i, got[i], again[i])
			}
		}
	})
}

func FuzzSeries(f *testing.F) {
	f.Add(AppendSeries(AppendSeries(nil, 1, []byte{1, 2, 3}), 2, []byte{4}))
	f.Add([]byte{1, 200, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d SeriesDecoder
		d.Reset(b)
		var re []byte
		for {
			ref, key, ok := d.Next()
			if !ok {
				break
			}
			re = AppendSeries(re, ref, key)
		}
		if d.Err() == nil && len(re) > len(b) {
			t.Fatalf("re-encoding grew: %d > %d", len(re), len(b))
		}
	})
}

// TestSamplesMsRoundTrip: samples-ms payloads keep each point's
// millisecond mark; a plain samples payload of the same points is the
// bytes it always was (the mark dropped), so old logs and new plain
// records are one format.
func TestSamplesMsRoundTrip(t *testing.T) {
	ss := []sample{
		{7, series.Point{T: 1_700_000_000_000, Bits: 5, Kind: series.Int, Ms: true}},
		{3, series.Float64Point(1_700_000_000_000, 1.5)},
		{3, series.Point{T: 1_700_000_001_000, Bits: math.Float64bits(0.25), Kind: series.Float32, Ms: true}},
		{1 << 40, series.IntPoint(0, math.MinInt64)},
	}
	var e SamplesEncoder
	e.ResetMs()
	var b []byte
	for _, s := range ss {
		b = e.Append(b, s.ref, s.p)
	}
	var d SamplesDecoder
	d.ResetMs(b)
	for i := 0; ; i++ {
		ref, p, ok := d.Next()
		if !ok {
			if d.Err() != nil || i != len(ss) {
				t.Fatalf("after %d samples: %v", i, d.Err())
			}
			break
		}
		if ref != ss[i].ref || p != ss[i].p {
			t.Errorf("sample %d: %d %+v, want %d %+v", i, ref, p, ss[i].ref, ss[i].p)
		}
	}
	plain := encodeSamples(ss)
	var unmarked []sample
	for _, s := range ss {
		s.p.Ms = false
		unmarked = append(unmarked, s)
	}
	if want := encodeSamples(unmarked); string(plain) != string(want) {
		t.Errorf("plain payload of marked points %x, want %x", plain, want)
	}
	if got, err := decodeSamples(plain); err != nil || len(got) != len(ss) || got[0].p.Ms {
		t.Errorf("plain payload decodes to %+v, %v", got, err)
	}
}
