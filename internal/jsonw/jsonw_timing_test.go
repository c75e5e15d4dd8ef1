package jsonw

import "testing"

var sink []byte

// BenchmarkAppendString: a label-like ASCII string, one with escapes and
// one with non-ASCII text, in each mode.
func BenchmarkAppendString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", "node_cpu_seconds_total"},
		{"escapes", "a \"quoted\"\tline\n<x>"},
		{"utf8", "température ☃ μs"},
	} {
		for _, m := range []struct {
			name string
			m    Mode
		}{{"json", JSON}, {"jackson", Jackson}, {"html", HTML}} {
			b.Run(c.name+"/"+m.name, func(b *testing.B) {
				dst := make([]byte, 0, 256)
				b.ReportAllocs()
				b.SetBytes(int64(len(c.s)))
				for b.Loop() {
					dst = m.m.AppendString(dst[:0], c.s)
				}
				sink = dst
			})
		}
	}
}
