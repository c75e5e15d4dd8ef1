package textimport

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReader: any input ends with points or refused lines, never a panic;
// every point's names hold no stand-in byte and its line number grows.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"sys.cpu 1356998400 42 host=web01\n",
		`a\ b 1 1 k\=1=v\ 2` + "\n",
		"m 1 1.5e3 k=v\r\n\n#c\nm 1 x\n",
		"\x1f\x8b\x08\x00",
		`m\ 1 1 \=\\=\ ` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := NewReader(bytes.NewReader(in), &Options{AllowSpecialChars: " =\\", MaxLineBytes: 512})
		if err != nil {
			return // a gzip header that does not parse
		}
		last := 0
		for r.Next() {
			if r.Line() < last {
				t.Fatalf("line %d after %d", r.Line(), last)
			}
			last = r.Line()
			if r.Bad() != nil {
				continue
			}
			p := r.Point()
			names := string(p.Metric)
			for _, tg := range p.Tags {
				names += string(tg.Key) + string(tg.Value)
			}
			if strings.ContainsAny(names, "\x01\x02\x03") || len(p.Metric) == 0 {
				t.Fatalf("point %s", p.String())
			}
		}
	})
}
