package telnet

import (
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/ingest/parse"
)

// TestPutKeys: a put's Key is 'T', its metric, 0 and its tags as
// written: equal for the same series written the same way whatever the
// time and value, apart for another tag or metric; a refused line sets
// none.
func TestPutKeys(t *testing.T) {
	p := newParser(t, nil)
	var keys []string
	for _, line := range []string{
		"put sys.cpu 1356998400 42 host=a cpu=0",
		"put sys.cpu 1356998410 43.5 host=a cpu=0",
		"put sys.cpu 1356998400 42 host=a cpu=1",
		"put sys.mem 1356998400 42 host=a cpu=0",
		"put sys.cpu 1356998400 NaN host=a cpu=0",
	} {
		var pt parse.Point
		if err := p.ParsePut([]byte(line), &pt); err != nil {
			keys = append(keys, "refused")
			if pt.Key != nil {
				t.Fatalf("%s: refused with Key %q", line, pt.Key)
			}
			continue
		}
		keys = append(keys, string(pt.Key))
	}
	want := []string{"Tsys.cpu\x00host=a cpu=0", "Tsys.cpu\x00host=a cpu=0", "Tsys.cpu\x00host=a cpu=1", "Tsys.mem\x00host=a cpu=0", "refused"}
	if fmt.Sprintf("%q", keys) != fmt.Sprintf("%q", want) {
		t.Fatalf("keys %q\nwant %q", keys, want)
	}
}
