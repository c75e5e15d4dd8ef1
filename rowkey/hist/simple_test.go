package hist

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// openTSDBVector is the value TestSimpleHistogram.testToFromBytes writes
// with Kryo in OpenTSDB's own tests: id 42, eight buckets [1,2) .. [8,9)
// counting 5, 5, 5, 0, 0, 0, 0, 0, underflow 0, overflow 2. Checked by
// hand: 1.0f is 3F800000, 2.0f 40000000 ... 9.0f 41100000, each count a
// one-byte varint.
const openTSDBVector = "2a" + "0008" +
	"3f800000" + "40000000" + "05" +
	"40000000" + "40400000" + "05" +
	"40400000" + "40800000" + "05" +
	"40800000" + "40a00000" + "00" +
	"40a00000" + "40c00000" + "00" +
	"40c00000" + "40e00000" + "00" +
	"40e00000" + "41000000" + "00" +
	"41000000" + "41100000" + "00" +
	"00" + "02"

func vectorHistogram() Histogram {
	h := Histogram{ID: 42, Overflow: 2}
	for i := 1; i <= 8; i++ {
		n := int64(0)
		if i <= 3 {
			n = 5
		}
		h.Set(float32(i), float32(i+1), n)
	}
	return h
}

func TestSimpleBytesOpenTSDBVector(t *testing.T) {
	want, _ := hex.DecodeString(openTSDBVector)
	h := vectorHistogram()
	if got := h.AppendEncoded(nil, true); !bytes.Equal(got, want) {
		t.Fatalf("encoded %x, want %x", got, want)
	}
	if got := h.AppendEncoded(nil, false); !bytes.Equal(got, want[1:]) {
		t.Fatalf("without id %x, want %x", got, want[1:])
	}
	var d Histogram
	if err := d.Decode(want, true); err != nil {
		t.Fatal(err)
	}
	if d.ID != 42 || len(d.Buckets) != 8 || d.Overflow != 2 || d.Underflow != 0 || d.Buckets[2] != (Bucket{3, 4, 5}) {
		t.Fatalf("decoded %+v", d)
	}
	if got := d.AppendEncoded(nil, true); !bytes.Equal(got, want) {
		t.Fatalf("round trip %x", got)
	}
}

func TestVarLong(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{
		{0, "00"}, {5, "05"}, {127, "7f"}, {128, "8001"}, {300, "ac02"},
		{1 << 56, "8080808080808080" + "01"},
		{-1, "ffffffffffffffffff"},
		{math.MaxInt64, "ffffffffffffffff7f"},
	} {
		got := AppendVarLong(nil, c.v)
		if hex.EncodeToString(got) != c.want {
			t.Errorf("%d: %x, want %s", c.v, got, c.want)
		}
		r := reader{b: got}
		if back := r.varLong(); back != c.v || r.err != nil || len(r.b) != 0 {
			t.Errorf("%d: read back %d (%v, %d left)", c.v, back, r.err, len(r.b))
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	var h Histogram
	err := h.Decode([]byte{0, 0, 4}, true)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `Byte array shorter than 6 bytes detected: "\x00\x00\x04"`) {
		t.Fatalf("short: %v", err)
	}
	// Two buckets announced, one given.
	raw, _ := hex.DecodeString("0000023f8000004000000005000000")
	if err := h.Decode(raw, true); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "Buffer underflow.") {
		t.Fatalf("cut: %v", err)
	}
	// A negative count is a Java loop that never runs: no buckets.
	raw, _ = hex.DecodeString("00ffff0102030405")
	if err := h.Decode(raw, true); err != nil || len(h.Buckets) != 0 || h.Underflow != 1 || h.Overflow != 2 {
		t.Fatalf("negative count: %v %+v", err, h)
	}
}

func TestSetOrderAndReplace(t *testing.T) {
	var h Histogram
	h.Set(5, 10, 1)
	h.Set(0, 5, 2)
	h.Set(0, 2, 3)
	h.Set(5, 10, 4) // replaces
	nan := float32(math.NaN())
	h.Set(nan, nan, 9)
	negZero := float32(math.Copysign(0, -1))
	h.Set(negZero, 1, 7)
	want := []Bucket{{negZero, 1, 7}, {0, 2, 3}, {0, 5, 2}, {5, 10, 4}, {nan, nan, 9}}
	if len(h.Buckets) != len(want) {
		t.Fatalf("%+v", h.Buckets)
	}
	for i, b := range want {
		g := h.Buckets[i]
		if math.Float32bits(g.Lo) != math.Float32bits(b.Lo) && !(g.Lo != g.Lo && b.Lo != b.Lo) || g.Count != b.Count {
			t.Fatalf("bucket %d: %+v, want %+v", i, g, b)
		}
	}
}

// TestPercentileByHand checks SimpleHistogram.percentile on the vector
// histogram: 15 counts in [1,2), [2,3), [3,4) of 5 each.
func TestPercentileByHand(t *testing.T) {
	h := vectorHistogram()
	for _, c := range []struct{ p, want float64 }{
		{50, 2.5},            // 5/15 = 33.3% < 50, 10/15 = 66.7% >= 50: midpoint of [2,3)
		{99, 3.5},            // only 15/15 reaches 99
		{33.333, 1.5},        // 33.333333333333336 >= 33.333
		{100, 3.5},           // the walk stops at the first bucket reaching 100%
		{1, 1.5},             // lower bound included
		{0.5, -1}, {101, -1}, // outside [1, 100]
		{float64(float32(99.9)), 3.5}, // a float percentile from a query, widened
	} {
		if got := h.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	// No counts: 0 * 100.0 / 0 is NaN, never >= p, so the walk ends with 0.
	var empty Histogram
	empty.Set(1, 2, 0)
	if got := empty.Percentile(50); got != 0 {
		t.Errorf("empty p50 = %v, want 0", got)
	}
	// The midpoint is computed in float32: (0.1f + 0.2f) / 2.
	var f Histogram
	f.Set(0.1, 0.2, 1)
	if got, want := f.Percentile(50), float64(float32(float32(0.1)+float32(0.2))/2); got != want {
		t.Errorf("float32 midpoint %v, want %v", got, want)
	}
}

func TestAddSumsBuckets(t *testing.T) {
	a := vectorHistogram()
	var b Histogram
	b.Set(1, 2, 10)
	b.Set(9, 10, 1)
	b.Underflow, b.Overflow = 3, 4
	a.Add(&b)
	if a.Count(1, 2) != 15 || a.Count(9, 10) != 1 || a.Underflow != 3 || a.Overflow != 6 || len(a.Buckets) != 9 {
		t.Fatalf("%+v", a)
	}
}

func TestQualifier(t *testing.T) {
	for _, c := range []struct {
		off  int64
		ms   bool
		want string
	}{
		{123000, false, "06007b"},  // 1356998523 in row 1356998400
		{500, false, "06000001f4"}, // 1356998400500: ms offset raw, no flags
		{1000, true, "06000003e8"}, // a ms timestamp on a whole second keeps 4 bytes
		{3599000, false, "060e0f"},
	} {
		q, err := AppendQualifier(nil, c.off, c.ms)
		if err != nil || hex.EncodeToString(q) != c.want {
			t.Errorf("%d/%v: %x %v, want %s", c.off, c.ms, q, err, c.want)
		}
		off, ms, err := ParseQualifier(q)
		if err != nil || off != c.off || ms != (len(q) == 5) {
			t.Errorf("parse %x: %d %v %v", q, off, ms, err)
		}
	}
	if _, err := AppendQualifier(nil, 3600*1000, false); err == nil {
		t.Error("offset of an hour accepted")
	}
}
