package schema

import "testing"

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"dense", "opentsdb"} {
		f, err := ParseFormat(s)
		if err != nil || f.String() != s || !f.Valid() {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("hbase"); err == nil {
		t.Error("ParseFormat accepted hbase")
	}
	if f := Format(2); f.Valid() || f.String() != "format(2)" {
		t.Errorf("Format(2): valid %v, %q", f.Valid(), f)
	}
}
