package codecbench

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
)

func TestEncodeDecode(t *testing.T) {
	for _, vm := range []gen.ValueMode{gen.ValuesInt, gen.ValuesFloat} {
		e, err := Encode(gen.Config{Hosts: 3, Span: 2 * time.Hour, Values: vm})
		if err != nil {
			t.Fatal(err)
		}
		if e.Points != 3*10*720 || len(e.Dense) != 60 || len(e.XOR) != 3*10*6 {
			t.Fatalf("%s: %d points, %d dense rows, %d chunks", vm, e.Points, len(e.Dense), len(e.XOR))
		}
		if _, err := e.DecodeDense(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DecodeXOR(); err != nil {
			t.Fatal(err)
		}
		d, x := e.DenseBytesPerPoint(), e.XORBytesPerPoint()
		t.Logf("%s: dense %.3f B/pt, xor %.3f B/pt", vm, d, x)
		if d <= 0 || x <= 0 || d > 8 || x > 8 {
			t.Fatalf("%s: dense %.3f xor %.3f bytes per point", vm, d, x)
		}
	}
}

func TestDecodeCountsPoints(t *testing.T) {
	e, err := Encode(gen.Config{Hosts: 1, Span: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.Points++ // a decoder that loses a point must fail
	if _, err := e.DecodeDense(); err == nil {
		t.Fatal("DecodeDense accepted a short count")
	}
	if _, err := e.DecodeXOR(); err == nil {
		t.Fatal("DecodeXOR accepted a short count")
	}
}
