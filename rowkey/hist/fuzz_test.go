package hist

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzDecode: any bytes decode or fail with ErrCorrupt, never panic, and
// what decodes encodes back to bytes that decode to the same histogram.
func FuzzDecode(f *testing.F) {
	v, _ := hex.DecodeString(openTSDBVector)
	f.Add(v)
	f.Add([]byte{0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x7f, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 0xff})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var h Histogram
		if err := h.Decode(raw, true); err != nil {
			return
		}
		enc := h.AppendEncoded(nil, true)
		if len(enc) < MinEncodedBytes {
			return // no buckets and small counts: OpenTSDB's reader refuses it too
		}
		var g Histogram
		if err := g.Decode(enc, true); err != nil {
			t.Fatalf("re-decode %x: %v", enc, err)
		}
		if again := g.AppendEncoded(nil, true); !bytes.Equal(again, enc) {
			t.Fatalf("unstable: %x then %x", enc, again)
		}
		_ = h.Percentile(50)
	})
}

// FuzzParseBuckets: the telnet bucket form never panics, and what parses
// encodes and decodes back to itself.
func FuzzParseBuckets(f *testing.F) {
	for _, s := range []string{"1,2=5:2,3=5:u=0:o=2", "u=1", "1,2=5:", "NaN,Infinity=1", "1e3,2e3=9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var h Histogram
		if err := ParseBuckets(&h, 0, s); err != nil {
			return
		}
		enc := h.AppendEncoded(nil, true)
		if len(enc) < MinEncodedBytes {
			return // OpenTSDB writes it and cannot read it back either
		}
		var g Histogram
		if err := g.Decode(enc, true); err != nil || !bytes.Equal(g.AppendEncoded(nil, true), enc) {
			t.Fatalf("%q: %x: %v", s, enc, err)
		}
	})
}

// FuzzParseConfig: any configuration text is refused or parsed, never a
// panic.
func FuzzParseConfig(f *testing.F) {
	f.Add(DefaultConfig)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseConfig(s) })
}
