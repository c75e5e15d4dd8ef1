package promql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// tsbsCPUAll is TSBS's cpu-max-all-1 as its VictoriaMetrics generator
// writes it.
const tsbsCPUAll = `max(max_over_time({__name__=~'cpu_(usage_user|usage_system|usage_idle|usage_nice|usage_iowait|usage_irq|usage_softirq|usage_steal|usage_guest|usage_guest_nice)', hostname=~'host_42'}[1h])) by (__name__)`

// parseCases are queries whose parse Parser must give as Prometheus's
// parser does, errors included.
var parseCases = []string{
	tsbsCPUAll,
	strings.Replace(tsbsCPUAll, "host_42", "host_7", 1),
	`rate(http_requests_total{job=~"api.*", code!~"5.."}[5m])`,
	`sum by (job) (rate(x{a=~"foo.+bar"}[1m])) / on() group_left sum(y{b=~"(a|b)c+"})`,
	`x{a=~"foo.+bar", b=~"foo.+bar"}`, // one regex twice
	`{__name__=~".*"}`,                // matches "": the parser refuses it
	`x{a=~".*"}`,                      // matches "", with a name
	`{a=~".*", b=~"x.+y"}`,            // refused, one kept token beside
	`{a=~"(x.+)?"}`,                   // kept, matches "": refused
	`{a!~"x.+y"}`,                     // != regex matches "": refused
	`x{a=~"(unclosed.*"}`,             // bad regex
	"x{a=~`raw\\d+string`}",           // raw string
	"x{a=~`raw\nline.*`} + y",         // raw string across lines
	`x{a=~"esc\\.aped\\d+"}`,          // escapes
	`x{a=~"é+ü.*ö"}`,                  // multi-byte runes
	`x{"utf8.label"=~"v.+w"}`,         // quoted label name
	`label_replace(x{a=~"q.+r"}, "dst", "$1", "src", "(.*)zz")`,
	`x{a=~"short"}`,           // below the kept length
	`x{a=~"a|b"}`,             // short alternation
	"x{a=~\"has\x01mark.*\"}", // the placeholder mark itself
	`x{a=~"one.+"} offset 5m @ 100`,
	`max_over_time(x{a=~"sub.+q"}[1h:5m])`,
	`x{a=~"bad" b="c"}`,             // parse error
	`x{a=~}`,                        // parse error
	`x{a=~"unterminated`,            // lex error
	`x{a=~"x.+y" # comment` + "\n}", // comment inside braces
	`{a=~"x.+y"} and {b=~"z.+w"} or {c=~"` + strings.Repeat("l.+", 2000) + `"}`,
	`sum(x{a=~"x.+y"}) by (le) > bool 2`,
}

// shape is a tree's nodes in walk order with their positions and text.
func shape(e parser.Expr) []string {
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if n == nil {
			return nil
		}
		out = append(out, fmt.Sprintf("%T %v %s", n, n.PositionRange(), n))
		return nil
	})
	return out
}

// sameParse fails t unless p parses qs as Prometheus's parser does.
func sameParse(t testing.TB, p *Parser, qs string) {
	want, wantErr := parser.ParseExpr(qs)
	got, gotErr := p.ParseExpr(qs)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%q: error %v, want %v", qs, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	ws, gs := shape(want), shape(got)
	if strings.Join(ws, "\n") != strings.Join(gs, "\n") {
		t.Fatalf("%q: tree\n%s\nwant\n%s", qs, strings.Join(gs, "\n"), strings.Join(ws, "\n"))
	}
	for i, ms := range parser.ExtractSelectors(want) {
		gms := parser.ExtractSelectors(got)[i]
		for j, m := range ms {
			for _, v := range []string{"", m.Value, "host_42", "cpu_usage_user", "foozbar", "raw1string"} {
				if m.Matches(v) != gms[j].Matches(v) {
					t.Fatalf("%q: matcher %s on %q: %v", qs, m, v, gms[j].Matches(v))
				}
			}
		}
	}
}

func TestParserMatchesPrometheus(t *testing.T) {
	p := NewParser(0)
	for range 2 { // the second time from kept matchers
		for _, qs := range parseCases {
			sameParse(t, p, qs)
		}
	}
	if n, _ := p.kept(); n == 0 {
		t.Fatal("no matcher kept")
	}
}

func TestParserKeepsMatchers(t *testing.T) {
	p := NewParser(0)
	regexOf := func(qs string) *labels.Matcher {
		e, err := p.ParseExpr(qs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range parser.ExtractSelectors(e)[0] {
			if m.Name == labels.MetricName {
				return m
			}
		}
		t.Fatalf("%q: no name matcher", qs)
		return nil
	}
	a := regexOf(tsbsCPUAll)
	b := regexOf(strings.Replace(tsbsCPUAll, "host_42", "host_7", 1))
	if a != b {
		t.Fatal("the name regex was compiled again for another host")
	}
	if n, size := p.kept(); n != 1 || size != matcherCost("__name__", a.Value) {
		t.Fatalf("kept %d matchers, %d bytes", n, size)
	}
	// A regex the parser refuses for matching "" is not swapped in, and
	// one that does not compile is not kept.
	for _, qs := range []string{`{a=~".*.*.*"}`, `x{a=~"(unclosed.*"}`} {
		if _, err := p.ParseExpr(qs); err == nil {
			t.Fatalf("%q parsed", qs)
		}
	}
	if n, _ := p.kept(); n != 2 {
		t.Fatalf("kept %d matchers, want 2: the refused one compiles, the bad one does not", n)
	}
}

func TestParserBudget(t *testing.T) {
	max := 3 * matcherCost("a", "v0000.+")
	p := NewParser(max)
	for i := range 10 {
		sameParse(t, p, fmt.Sprintf(`x{a=~"v%04d.+"}`, i))
		if n, size := p.kept(); size > max || n > 3 {
			t.Fatalf("after %d: %d matchers, %d bytes over %d", i, n, size, max)
		}
	}
	// The most recently used stay: v0009 is kept, v0000 is not.
	n0, _ := p.kept()
	sameParse(t, p, `x{a=~"v0009.+"}`)
	if n, _ := p.kept(); n != n0 {
		t.Fatal("a kept matcher was built again")
	}
	if _, ok := p.entries[matcherKey{labels.MatchRegexp, "a", "v0000.+"}]; ok {
		t.Fatal("the oldest matcher outlived the budget")
	}
	// A matcher over the whole budget is never kept.
	long := `x{a=~"` + strings.Repeat("z.", 40) + `"}`
	sameParse(t, NewParser(1024), long)
}

func FuzzParser(f *testing.F) {
	for _, qs := range parseCases {
		f.Add(qs)
	}
	p := NewParser(64 << 10)
	f.Fuzz(func(t *testing.T, qs string) {
		if len(qs) > 4096 {
			return
		}
		sameParse(t, p, qs)
	})
}

func BenchmarkParseTSBS(b *testing.B) {
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = strings.Replace(tsbsCPUAll, "host_42", fmt.Sprintf("host_%d", i), 1)
	}
	b.Run("prometheus", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := parser.ParseExpr(hosts[i%len(hosts)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("tsd", func(b *testing.B) {
		p := NewParser(0)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := p.ParseExpr(hosts[i%len(hosts)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func TestHasCompiledRegex(t *testing.T) {
	for qs, want := range map[string]bool{
		tsbsCPUAll:                            true,
		`x{hostname=~'host_1|host_2|host_3'}`: false,
		`x{a=~"a\\.b"}`:                       true,
		`x{a=~ "foo" , b!~ 'x.y'}`:            true,
		"x{a=~`lit|eral`, b=\"c.d\"}":         false, // the dot is in an equality
		`x{a="b"}`:                            false,
		`x{a=~"ab\"c|d"} + y{b=~"(e)"}`:       true,
		`x{a=~"unterminated.`:                 true,
		`x{a=~`:                               false,
	} {
		if got := hasCompiledRegex(qs); got != want {
			t.Errorf("%q: %v, want %v", qs, got, want)
		}
	}
	// A query whose regexes are plain literals costs what Prometheus's
	// parse costs: no lexing beforehand.
	p := NewParser(0)
	qs := `max(max_over_time(cpu_usage_user{hostname=~'host_1|host_2|host_3'}[1h])) by (__name__)`
	prom := testing.AllocsPerRun(20, func() { parser.ParseExpr(qs) })
	ours := testing.AllocsPerRun(20, func() { p.ParseExpr(qs) })
	if ours != prom {
		t.Fatalf("%v allocations a parse, Prometheus's parser %v", ours, prom)
	}
}

// TestParserConcurrent parses from several goroutines with a budget that
// keeps evicting, as a daemon's concurrent queries do (run under -race).
func TestParserConcurrent(t *testing.T) {
	p := NewParser(4 * matcherCost("a", "v00.+"))
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				qs := fmt.Sprintf(`sum(x{a=~"v%02d.+", b=~"w.*z"}) / y{c=~"q%d|r.+"}`, (i+g)%12, i%3)
				want, _ := parser.ParseExpr(qs)
				got, err := p.ParseExpr(qs)
				if err != nil || got.String() != want.String() {
					t.Errorf("%q: %v %v", qs, got, err)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if _, size := p.kept(); size > 4*matcherCost("a", "v00.+") {
		t.Fatalf("%d bytes kept over the budget", size)
	}
}
