package retention

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseAndMatch(t *testing.T) {
	r, err := Parse(" tmp.*:1d, sys.*:90d ,job:*:2w,a\\*b:12h,c\\,d:30m,*.count:1y,*:forever")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		metric string
		keep   time.Duration
		rule   int
	}{
		{"tmp.x", 24 * time.Hour, 0},
		{"tmp.", 24 * time.Hour, 0},
		{"tmpx", Forever, 6},
		{"sys.cpu.user", 90 * 24 * time.Hour, 1},
		{"job:rate5m", 14 * 24 * time.Hour, 2},
		{"a*b", 12 * time.Hour, 3},
		{"axb", Forever, 6}, // the star was escaped
		{"c,d", 30 * time.Minute, 4},
		{"http.count", 365 * 24 * time.Hour, 5},
		{"", Forever, 6},
	} {
		keep, i := r.Match(c.metric)
		if keep != c.keep || i != c.rule {
			t.Errorf("%q: keep %v by rule %d, want %v by rule %d", c.metric, keep, i, c.keep, c.rule)
		}
	}
	want := "tmp.*:1d,sys.*:90d,job:*:2w,a\\*b:12h,c\\,d:30m,*.count:1y,*:forever"
	if r.String() != want {
		t.Errorf("String() = %q, want %q", r.String(), want)
	}
}

func TestFirstMatchWins(t *testing.T) {
	r, _ := Parse("sys.cpu.*:1d,sys.*:90d")
	if keep, _ := r.Match("sys.cpu.user"); keep != 24*time.Hour {
		t.Errorf("sys.cpu.user kept %v", keep)
	}
	r, _ = Parse("sys.*:90d,sys.cpu.*:1d")
	if keep, _ := r.Match("sys.cpu.user"); keep != 90*24*time.Hour {
		t.Errorf("sys.cpu.user kept %v with the broad rule first", keep)
	}
}

func TestCutoff(t *testing.T) {
	r, _ := Parse("tmp.*:1d")
	now := time.UnixMilli(1_767_225_600_000)
	if c := r.Cutoff("tmp.a", now); c != 1_767_225_600_000-86_400_000 {
		t.Errorf("cutoff %d", c)
	}
	if c := r.Cutoff("other", now); c != math.MinInt64 {
		t.Errorf("an unmatched metric has cutoff %d", c)
	}
	var none Rules // the zero value keeps everything
	if c := none.Cutoff("tmp.a", now); c != math.MinInt64 {
		t.Errorf("no rules: cutoff %d", c)
	}
	empty, err := Parse("  ")
	if err != nil || empty.Len() != 0 {
		t.Errorf("blank setting: %v, %d rules", err, empty.Len())
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"tmp.*":          `bad rule 1 "tmp.*": want glob:duration`,
		"a:1d,b:":        `bad rule 2 "b:": duration "" does not start with a number`,
		"a:1d,,b:1d":     `bad rule 2 "": want glob:duration`,
		":1d":            `empty pattern`,
		"a:0d":           `duration "0d" is not positive`,
		"a:5x":           `unit "x" is not one of`,
		"a:d":            `does not start with a number`,
		"a:99999999999y": `too long`,
		"a:-1d":          `does not start with a number`,
		"a\\:1d":         `lone backslash`,
		"a:1.5d":         `unit ".5d"`,
	} {
		_, err := Parse(in)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax containing %q", in, err, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"250ms": 250 * time.Millisecond, "30s": 30 * time.Second, "5m": 5 * time.Minute,
		"12h": 12 * time.Hour, "1d": 24 * time.Hour, "2w": 14 * 24 * time.Hour,
		"1n": 30 * 24 * time.Hour, "1y": 365 * 24 * time.Hour,
	} {
		if d, err := ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, d, err)
		}
		if got := FormatKeep(want); got != in && in != "1n" {
			t.Errorf("FormatKeep(%v) = %q, want %q", want, got, in)
		}
	}
}

// refMatch is the reference matcher: dynamic programming over the
// pattern's tokens (a literal byte or a star) and the name's bytes.
func refMatch(pattern, name string) bool {
	type tok struct {
		star bool
		c    byte
	}
	var toks []tok
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
			toks = append(toks, tok{c: pattern[i]})
		case '*':
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{c: pattern[i]})
		}
	}
	// ok[j]: the tokens so far match name[:j].
	ok := make([]bool, len(name)+1)
	ok[0] = true
	for _, tk := range toks {
		next := make([]bool, len(name)+1)
		for j := range ok {
			switch {
			case tk.star:
				next[j] = ok[j] || (j > 0 && next[j-1])
			case j > 0:
				next[j] = ok[j-1] && name[j-1] == tk.c
			}
		}
		ok = next
	}
	return ok[len(name)]
}

func TestGlobAgainstReference(t *testing.T) {
	names := []string{"", "a", "ab", "aba", "abab", "abcab", "ba", "aab", "xaby", "a*b"}
	for _, p := range []string{"*", "a*", "*a", "a*b", "*ab*", "a*a*b", "ab*ab", "*b*a*", "\\**", "a\\*b", "aba*aba"} {
		for _, n := range names {
			if got, want := Match(p, n), refMatch(p, n); got != want {
				t.Errorf("Match(%q, %q) = %v, reference says %v", p, n, got, want)
			}
		}
	}
}

// FuzzParse: a setting that parses prints back to one that parses to the
// same rules, and every glob agrees with the reference matcher.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"tmp.*:1d,sys.*:90d,*:forever", "job:*:2w", "a\\*b:12h", "c\\,d:30m", "*a*b*:1ms", "", "a:", ":", "\\", "a:1y,",
	} {
		f.Add(s, "tmp.sys.a*b")
	}
	f.Fuzz(func(t *testing.T, setting, metric string) {
		r, err := Parse(setting)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			return
		}
		again, err := Parse(r.String())
		if err != nil || again.String() != r.String() || again.Len() != r.Len() {
			t.Fatalf("%q prints as %q, which parses to %v (%v)", setting, r.String(), again, err)
		}
		keep, i := r.Match(metric)
		want := -1
		for j := range r.Len() {
			if refMatch(r.Rule(j).Pattern, metric) {
				want = j
				break
			}
		}
		if i != want || (i >= 0 && keep != r.Rule(i).Keep) {
			t.Fatalf("%q on %q: rule %d, reference says %d", setting, metric, i, want)
		}
	})
}

func TestIntervalRules(t *testing.T) {
	r, err := Parse(`tmp.*:1d,*:15d,@1h *:1y,@1d sys.*:forever,@1d *:2y`)
	if err != nil {
		t.Fatal(err)
	}
	if keep, i := r.Match("cpu"); keep != 15*24*time.Hour || i != 1 {
		t.Errorf("raw cpu: %v %d", keep, i)
	}
	h := r.ForInterval("1h")
	if keep, _ := h.Match("tmp.x"); keep != 365*24*time.Hour {
		t.Errorf("1h tmp.x: %v", keep)
	}
	d := r.ForInterval("1d")
	if keep, _ := d.Match("sys.cpu"); keep != Forever {
		t.Errorf("1d sys.cpu: %v", keep)
	}
	if keep, _ := d.Match("cpu"); keep != 2*365*24*time.Hour {
		t.Errorf("1d cpu: %v", keep)
	}
	if got := r.Intervals(); len(got) != 2 || got[0] != "1h" || got[1] != "1d" {
		t.Errorf("Intervals %v", got)
	}
	if s := r.String(); s != "tmp.*:1d,*:15d,@1h *:1y,@1d sys.*:forever,@1d *:2y" {
		t.Errorf("String %q", s)
	}
	for _, bad := range []string{"@1h", "@ *:1d", "@1h *:x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
