package entropy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestBucketRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []uint64{0, 1, 7, 8, 9, 15, 16, 1<<63 - 1, 1 << 63, math.MaxUint64}
	for i := 0; i < 10000; i++ {
		vals = append(vals, r.Uint64()>>r.IntN(64))
	}
	for _, u := range vals {
		s, e, rem := Bucket(u)
		if int(s) >= NumSymbols || SymbolExtra(s) != e {
			t.Fatalf("Bucket(%d) = %d, %d", u, s, e)
		}
		if got := SymbolBase(s) | rem; got != u {
			t.Fatalf("Bucket(%d) decodes to %d", u, got)
		}
	}
	if s, _, _ := Bucket(math.MaxUint64); s != NumSymbols-1 {
		t.Fatalf("largest symbol %d", s)
	}
	for _, v := range []int64{0, -1, 1, math.MinInt64, math.MaxInt64} {
		if Unzigzag(Zigzag(v)) != v {
			t.Fatalf("zigzag %d", v)
		}
	}
	if Zigzag(-1) != 1 || Zigzag(1) != 2 {
		t.Fatal("zigzag order")
	}
}

type op struct {
	m    *Model
	sym  uint8
	v    uint64
	bits uint8
}

func TestRANSRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var h Hist
	for i := 0; i < 500; i++ {
		h.Add(uint8(r.IntN(5) * 3))
	}
	var norm, tm Model
	norm.Normalize(&h)
	if _, err := tm.ParseTable(norm.AppendTable(nil)); err != nil || tm.Freq != norm.Freq {
		t.Fatal(err)
	}
	g := Parametric(8)
	var ops []op
	for i := 0; i < 5000; i++ {
		switch r.IntN(3) {
		case 0:
			ops = append(ops, op{m: &tm, sym: uint8(r.IntN(5) * 3)})
		case 1:
			ops = append(ops, op{m: g, sym: uint8(r.IntN(9))})
		default:
			n := uint8(r.IntN(65))
			ops = append(ops, op{v: r.Uint64() & (1<<n - 1), bits: n})
		}
	}
	var e Encoder
	for _, o := range ops {
		if o.m != nil {
			e.Symbol(o.m, o.sym)
		} else {
			e.Bits(o.v, o.bits)
		}
	}
	buf := e.AppendTo([]byte("hdr"))
	var d Decoder
	if err := d.Init(buf[3:]); err != nil {
		t.Fatal(err)
	}
	for i, o := range ops {
		if o.m != nil {
			if s := d.Symbol(o.m); s != o.sym {
				t.Fatalf("op %d: symbol %d, want %d", i, s, o.sym)
			}
		} else if v := d.Bits(o.bits); v != o.v {
			t.Fatalf("op %d: bits %x, want %x", i, v, o.v)
		}
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	// A truncated stream is reported, never a panic.
	d.Init(buf[3 : len(buf)-1])
	for _, o := range ops {
		if o.m != nil {
			d.Symbol(o.m)
		} else {
			d.Bits(o.bits)
		}
	}
	if err := d.Done(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated stream: %v", err)
	}
}

func TestEmptyStream(t *testing.T) {
	var e Encoder
	if got := e.AppendTo(nil); len(got) != 0 {
		t.Fatalf("empty encoder wrote %x", got)
	}
	var d Decoder
	if d.Init(nil) != nil || d.Done() != nil {
		t.Fatal("empty stream must decode")
	}
	for _, bad := range [][]byte{{1, 2}, {0, 0, 0, 0}, {0x80, 0, 0, 0}, {0, 0x7f, 0xff, 0xff, 1}} {
		if d.Init(bad) == nil {
			t.Fatalf("short or out-of-range state %x accepted", bad)
		}
	}
	if d.InitLegacy([]byte{0, 0, 0, 1}) == nil {
		t.Fatal("legacy state below 2^23 accepted")
	}
}

// TestRANSStartState encodes streams of 1 to 300 tokens (skewed and flat
// models, raw bits) from both starts: each decodes from its own start and
// not from the other, and starting at 1 saves about the 23 bits a start
// at 2^23 carried.
func TestRANSStartState(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	skewed, flat := Parametric(2), Parametric(60)
	coded := func(m *Model, n int) uint8 { // a symbol m can code
		for {
			if s := uint8(r.IntN(n)); m.Freq[s] != 0 {
				return s
			}
		}
	}
	var e Encoder
	var d Decoder
	saved, streams := 0, 0
	for range 2000 {
		ops := make([]op, 1+r.IntN(300))
		e.Reset()
		for i := range ops {
			switch r.IntN(3) {
			case 0:
				ops[i] = op{m: skewed, sym: coded(skewed, 3)}
			case 1:
				ops[i] = op{m: flat, sym: coded(flat, 40)}
			default:
				n := uint8(r.IntN(20))
				ops[i] = op{v: r.Uint64() & (1<<n - 1), bits: n}
			}
			if o := ops[i]; o.m != nil {
				e.Symbol(o.m, o.sym)
			} else {
				e.Bits(o.v, o.bits)
			}
		}
		now, legacy := e.AppendTo(nil), e.appendFrom(nil, ransL)
		for _, c := range []struct {
			buf  []byte
			init func([]byte) error
			ok   bool
			what string
		}{
			{now, d.Init, true, "start 1"},
			{legacy, d.InitLegacy, true, "start 2^23"},
			{legacy, d.Init, false, "start 2^23 read as start 1"},
		} {
			err := c.init(c.buf)
			for i, o := range ops {
				if o.m != nil {
					if s := d.Symbol(o.m); s != o.sym && c.ok {
						t.Fatalf("%s: op %d: symbol %d, want %d", c.what, i, s, o.sym)
					}
				} else if v := d.Bits(o.bits); v != o.v && c.ok {
					t.Fatalf("%s: op %d: bits %x, want %x", c.what, i, v, o.v)
				}
			}
			if err == nil {
				err = d.Done()
			}
			if (err == nil) != c.ok {
				t.Fatalf("%s (%d ops, %x): %v", c.what, len(ops), c.buf, err)
			}
		}
		if len(legacy) > 8 {
			saved += len(legacy) - len(now)
			streams++
		}
	}
	if per := float64(saved) / float64(streams); per < 2.5 {
		t.Fatalf("start 1 saved %.2f bytes a stream, want about 3", per)
	}
	t.Logf("start 1 saved %.2f bytes a stream over %d streams", float64(saved)/float64(streams), streams)
}

func TestTableSerialization(t *testing.T) {
	var h Hist
	for s, n := range map[uint8]int{0: 300, 2: 40, 7: 3, 40: 1} {
		for i := 0; i < n; i++ {
			h.Add(s)
		}
	}
	var m, back Model
	m.Normalize(&h)
	buf := m.AppendTable(nil)
	if len(buf) != m.TableBytes() {
		t.Fatalf("TableBytes %d, wrote %d", m.TableBytes(), len(buf))
	}
	rest, err := back.ParseTable(append(buf, 0xAA))
	if err != nil || len(rest) != 1 || back.Freq != m.Freq {
		t.Fatalf("ParseTable: %v rest %x", err, rest)
	}
	for _, bad := range [][]byte{{}, {5, 2}, {0, 255}, {0, 1, 0x80, 0x08, 0}, {0, 1, 1, 1}} {
		if _, err := back.ParseTable(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseTable(%x) = %v", bad, err)
		}
	}
}

func TestBestParametricPicksGaussian(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var h Hist
	for i := 0; i < 5000; i++ {
		s, _, _ := Bucket(Zigzag(int64(math.RoundToEven(r.NormFloat64()))))
		h.Add(s)
	}
	id, bits := BestParametric(&h)
	if id>>6 != 0 || id&63 < 7 || id&63 > 9 {
		t.Fatalf("best model %d (family %d scale %d)", id, id>>6, id&63)
	}
	if perSym := bits / 5000; perSym > 2.15 {
		t.Fatalf("%.3f bits per symbol, want about 2.1", perSym)
	}
	if c := Parametric(id).Cost(&h); math.Abs(c-bits) > 1e-3*bits {
		t.Fatalf("Cost %v != %v", c, bits)
	}
}

func FuzzDecoder(f *testing.F) {
	var e Encoder
	e.Symbol(Parametric(8), 2)
	e.Bits(0x1234, 13)
	f.Add(e.AppendTo(nil))
	f.Add([]byte{0x00, 0x80, 0, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		if d.Init(b) != nil {
			return
		}
		for i := 0; i < 64; i++ {
			d.Symbol(Parametric(uint8(i)))
			d.Bits(uint8(i))
		}
		_ = d.Done()
	})
}
