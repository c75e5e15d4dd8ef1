package jsonw

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refJava is appendJava as it was before integers took AppendInt:
// strconv's shortest digits for every finite value, the reference the
// faster path must match byte for byte.
func refJava(dst []byte, f float64, bits int) []byte {
	switch abs := math.Abs(f); {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case abs == 0 || (abs >= 1e-3 && abs < 1e7):
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bits)
		if bytes.IndexByte(dst[start:], '.') < 0 {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	e := 0
	for s[e] != 'e' {
		e++
	}
	dst = append(dst, s[:e]...)
	if bytes.IndexByte(s[:e], '.') < 0 {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	exp := s[e+1:]
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// edgeDoubles are the layout's boundaries and the shapes answers hold.
func edgeDoubles() []float64 {
	vs := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
		1, -1, 0.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 61.34722222222222, 100, 1e-3, -1e-3, 9.99e-4,
		math.Nextafter(1e-3, 0), math.Nextafter(1e-3, 1), 1e7, -1e7, math.Nextafter(1e7, 0), math.Nextafter(1e7, 2e7),
		9999999, 9999999.5, 9999999.999999998, 1e21, 1e22, 1e23, -1e21, 1.5e300, 5e-324, -5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308,
		1 << 53, 1<<53 + 2, 1e15, 123456.789, 0.001234, 0.01, 0.0123, 1e6, 1234567, 1234567.5, 10, 1e-10, 1.7976931348623157e308}
	for e := -30; e <= 30; e++ {
		p := math.Pow(10, float64(e))
		vs = append(vs, p, -p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), 1.5*p, 9.5*p)
	}
	return vs
}

// randomDoubles: averages of integer sums (the rollup figure's values),
// decimals with few places, integers, and arbitrary bit patterns, from a
// fixed seed.
func randomDoubles(n int) []float64 {
	r := rand.New(rand.NewPCG(19, 2026))
	vs := make([]float64, 0, 5*n)
	for range n {
		vs = append(vs,
			float64(r.IntN(100*360)-10*360)/float64(1+r.IntN(360)),
			float64(r.IntN(2_000_000)-1_000_000)/math.Pow(10, float64(r.IntN(8))),
			float64(r.Int64N(1<<54)-1<<53),
			math.Float64frombits(r.Uint64()),
			(r.Float64()-0.5)*math.Pow(10, float64(r.IntN(40)-20)))
	}
	return vs
}

// TestAppendJavaMatchesReference: appendJava writes what refJava does,
// for doubles and floats.
func TestAppendJavaMatchesReference(t *testing.T) {
	vs := append(edgeDoubles(), randomDoubles(40_000)...)
	var got, want []byte
	for _, v := range vs {
		for _, bits := range []int{64, 32} {
			f := v
			if bits == 32 {
				f = float64(float32(v))
			}
			got, want = appendJava(got[:0], f, bits), refJava(want[:0], f, bits)
			if string(got) != string(want) {
				t.Fatalf("appendJava(%v, %d) = %s, want %s", f, bits, got, want)
			}
		}
	}
}

// BenchmarkAppendJava: averages of integer sums, as the 1h-avg rollup
// figure answers, and integers, by appendJava and by the reference (the
// writer before, for the before figure in one run).
func BenchmarkAppendJava(b *testing.B) {
	// Hourly averages of 10 s samples: random sums over 360, as many as
	// a query's answer holds (so the branch predictor cannot learn them).
	r := rand.New(rand.NewPCG(1, 360))
	avgs := make([]float64, 1<<16)
	ints := make([]float64, 1<<16)
	for i := range avgs {
		avgs[i] = float64(r.IntN(36_000_000)) / 360
		ints[i] = float64(i * 37)
	}
	for _, c := range []struct {
		name string
		vs   []float64
	}{{"avg", avgs}, {"int", ints}} {
		for _, w := range []struct {
			name string
			fn   func([]byte, float64, int) []byte
		}{{"new", appendJava}, {"ref", refJava}} {
			b.Run(c.name+"/"+w.name, func(b *testing.B) {
				dst := make([]byte, 0, 64)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					dst = w.fn(dst[:0], c.vs[i&(1<<16-1)], 64)
					i++
				}
				sink = dst
			})
		}
	}
}
