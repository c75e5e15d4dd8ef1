package parse

import (
	"errors"
	"testing"

	"github.com/tsd-db/tsd/uid"
)

func TestNamesAgreeWithValidator(t *testing.T) {
	for _, rules := range []uid.Rules{uid.RulesOpenTSDB, uid.RulesLossless} {
		v := uid.NewValidator(rules, "!")
		n := NewNames(v)
		for _, s := range []string{"sys.cpu", "x!", "a b", "", "中文", "a\tb", "+Inf", "ok\xff", "le", "a:b", "é!"} {
			want := v.ValidateString(uid.TagV, s)
			got := n.Check(uid.TagV, []byte(s))
			if (want == nil) != (got == nil) || (got != nil && got.Error() != want.Error()) {
				t.Errorf("rules %d %q: got %v, want %v", rules, s, got, want)
			}
			if got != nil && !errors.Is(got, uid.ErrInvalidName) {
				t.Errorf("%q: %v is not ErrInvalidName", s, got)
			}
		}
	}
}

func TestNamesCheckDoesNotAllocate(t *testing.T) {
	n := NewNames(uid.NewValidator(uid.RulesOpenTSDB, ""))
	name := []byte("sys.cpu.user_total-x/y")
	if a := testing.AllocsPerRun(100, func() { _ = n.Check(uid.Metric, name) }); a != 0 {
		t.Fatalf("%v allocs", a)
	}
}
