package influx

import (
	"fmt"
	"testing"
)

// TestPointKeys: a point's Key is 'I', its line up to the fields, 0 and
// its field key: equal for the same series written the same way, apart
// for another field, tag or measurement, and never cut by an escape.
func TestPointKeys(t *testing.T) {
	d, err := NewDecoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := "cpu,host=a usage=1,idle=2 10\n" +
		"cpu,host=a usage=3 20\n" +
		"cpu,host=b usage=4 30\n" +
		"cpu,host=a\\ b usage=5 40\n" +
		"mem,host=a usage=6 50\n"
	d.Reset([]byte(body), Nanosecond, 0)
	var keys []string
	for d.Next() {
		if d.Bad() != nil {
			t.Fatalf("bad line: %v", d.Bad())
		}
		keys = append(keys, string(d.Point().Key))
	}
	want := []string{"Icpu,host=a\x00usage", "Icpu,host=a\x00idle", "Icpu,host=a\x00usage", "Icpu,host=b\x00usage",
		"Icpu,host=a\\ b\x00usage", "Imem,host=a\x00usage"}
	if fmt.Sprintf("%q", keys) != fmt.Sprintf("%q", want) {
		t.Fatalf("keys %q\nwant %q", keys, want)
	}
}
