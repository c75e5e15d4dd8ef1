package uid

import (
	"errors"
	"testing"
)

func TestValidatorOpenTSDB(t *testing.T) {
	v := NewValidator(RulesOpenTSDB, "")
	for _, ok := range []string{"sys.cpu.user", "a-b_c.d/e", "Ünïcödé", "中文", "X9"} {
		if err := v.ValidateString(Metric, ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, tc := range []struct {
		kind Kind
		name string
		want string
	}{
		{Metric, "x!", `Invalid metric name ("x!"): illegal character: !`},
		{TagK, "ho st", `Invalid tag name ("ho st"): illegal character: U+0020`},
		{TagV, "+Inf", `Invalid tag value ("+Inf"): illegal character: +`},
		{TagV, "a:b", `Invalid tag value ("a:b"): illegal character: :`},
		{Metric, "", `Invalid metric name: empty string`},
		{Metric, "a€", `Invalid metric name ("a€"): illegal character: €`},
		{TagV, "a\x01", `Invalid tag value ("a\x01"): illegal character: U+0001`},
		{TagV, "a\xffb", `Invalid tag value ("a\xffb"): not valid UTF-8`},
	} {
		err := v.ValidateString(tc.kind, tc.name)
		if !errors.Is(err, ErrInvalidName) || err.Error() != tc.want {
			t.Errorf("%s %q: got %v, want %s", tc.kind, tc.name, err, tc.want)
		}
	}
	special := NewValidator(RulesOpenTSDB, "!:€")
	for _, ok := range []string{"x!", "a:b", "a€"} {
		if err := special.ValidateString(Metric, ok); err != nil {
			t.Errorf("allow_specialchars: %q refused: %v", ok, err)
		}
	}
	if err := special.ValidateString(Metric, "a+b"); err == nil {
		t.Error("allow_specialchars: + accepted though not listed")
	}
}

func TestValidatorLossless(t *testing.T) {
	v := NewValidator(RulesLossless, "")
	for _, ok := range []string{"+Inf", "le", "a:b", "with space", "http_requests_total{x}", "中文", "\u00a0nbsp", "~!@#$%^&*()"} {
		if err := v.ValidateString(TagV, ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"", "Invalid tag value: empty string"},
		{"a\tb", `Invalid tag value ("a\tb"): illegal character: U+0009`},
		{"a\nb", `Invalid tag value ("a\nb"): illegal character: U+000A`},
		{"a\u200bb", `Invalid tag value ("a\u200bb"): illegal character: U+200B`},
		{"\xc3", `Invalid tag value ("\xc3"): not valid UTF-8`},
	} {
		err := v.ValidateString(TagV, tc.name)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.name, err, tc.want)
		}
	}
}

// FuzzValidate: no panic, and what RulesOpenTSDB accepts RulesLossless
// accepts too (unless it contains a special char it would not).
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"sys.cpu", "x!", "", "中", "\xff", "a b"} {
		f.Add(s)
	}
	strict, loose := NewValidator(RulesOpenTSDB, ""), NewValidator(RulesLossless, "")
	f.Fuzz(func(t *testing.T, s string) {
		if strict.ValidateString(Metric, s) == nil && loose.ValidateString(Metric, s) != nil {
			t.Fatalf("%q passes OpenTSDB rules but not lossless ones", s)
		}
	})
}
