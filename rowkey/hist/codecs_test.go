package hist

import (
	"errors"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := c.SimpleID(); !ok || id != 0 {
		t.Fatalf("simple id %d %v", id, ok)
	}
	if err := c.Check(1); !errors.Is(err, ErrNoCodec) || !strings.Contains(err.Error(), "No codec found mapped to ID 1") {
		t.Fatalf("check 1: %v", err)
	}
	c, err = ParseConfig(`{"net.opentsdb.core.SimpleHistogramDecoder": 42}`)
	if id, _ := c.SimpleID(); err != nil || id != 42 {
		t.Fatalf("id 42: %v %d", err, id)
	}
	empty, err := ParseConfig(`{}`)
	if _, ok := empty.SimpleID(); err != nil || ok {
		t.Fatalf("empty: %v %v", err, ok)
	}
	for text, msg := range map[string]string{
		`{"net.opentsdb.core.SimpleHistogramDecoder": 256}`: "must be from 0 to 255",
		`{"net.opentsdb.core.SimpleHistogramDecoder": -1}`:  "must be from 0 to 255",
		`{"com.example.Sketch": 1}`:                         "Unable to find a decoder named 'com.example.Sketch'",
		`[1]`:                                               "not a JSON object",
		`{"a":1} x`:                                         "trailing",
	} {
		if _, err := ParseConfig(text); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", text, err, msg)
		}
	}
}

func TestParseBuckets(t *testing.T) {
	var h Histogram
	if err := ParseBuckets(&h, 0, "1,2=5:2,3=5:3,4=5:U=1:o=2"); err != nil {
		t.Fatal(err)
	}
	if len(h.Buckets) != 3 || h.Underflow != 1 || h.Overflow != 2 || h.Count(2, 3) != 5 {
		t.Fatalf("%+v", h)
	}
	for s, msg := range map[string]string{
		"1,2=5:":   "Improperly formatted bucket: ",
		"1,2":      "Improperly formatted bucket: 1,2",
		"1=5":      "Improperly formatted bounds: 1=5",
		"1,x=5":    `For input string: "x"`,
		"1,2=five": `For input string: "five"`,
		"u=1.5":    `For input string: "1.5"`,
		"1,2=5=6":  "Improperly formatted bucket: 1,2=5=6",
	} {
		if err := ParseBuckets(&h, 0, s); err == nil || err.Error() != msg {
			t.Errorf("%q: %v, want %q", s, err, msg)
		}
	}
}

func TestJavaParseFloat(t *testing.T) {
	for s, want := range map[string]float32{"1": 1, "1.5f": 1.5, " 2e1 ": 20, "-0.25D": -0.25, "+3": 3} {
		if got, err := JavaParseFloat(s); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "inf", "0x10", "1_0", "nan", "abc"} {
		if _, err := JavaParseFloat(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
