package telnet

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/invariants"
)

func newParser(t testing.TB, opts *Options) *Parser {
	p, err := NewParser(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePut(t *testing.T) {
	p := newParser(t, nil)
	for _, tc := range []struct{ line, want string }{
		{"put sys.cpu.user 1356998400 42 host=web01 cpu=0", "sys.cpu.user{host=web01,cpu=0} 1356998400000 42i"},
		{"put cpu_usage_idle 1763801234 97.487437 cpu=cpu-total host=myhost", "cpu_usage_idle{cpu=cpu-total,host=myhost} 1763801234000 97.487437f64"},
		{"put m 1356998400500 42.5 a=b", "m{a=b} 1356998400500 42.5f32"},
		{"put m 1356998400.500 1.3E3 a=b", "m{a=b} 1356998400500 1300f32"},
		{"put m 1356998400.5 1 a=b", "m{a=b} 13569984005 1i"},
		{"put m 1 2", "m{} 1000 2i"},
		{"put m 1 2 ", "m{} 1000 2i"},
		{"put m 1 -2  a=b   c=d ", "m{a=b,c=d} 1000 -2i"},
		{"put m 1 2 a=b a=b", "m{a=b} 1000 2i"},
		{"put m 1 1e+21 a=b", "m{a=b} 1000 1e+21f64"},
		{"put m 1 5e-07 a=b", "m{a=b} 1000 5e-07f64"},
		{"put m 1 9223372036854775807", "m{} 1000 9223372036854775807i"},
		{"put m 4294967295 0", "m{} 4294967295000 0i"},
		{"put m 4294967296 0", "m{} 4294967296 0i"},
		{"put m 9999999999999 0", "m{} 9999999999999 0i"},
		{"put Ünï/cödé-_.x 1 2 k=中文", "Ünï/cödé-_.x{k=中文} 1000 2i"},
		{"rollup m 1 2", "m{} 1000 2i"},
	} {
		var pt parse.Point
		if err := p.ParsePut([]byte(tc.line), &pt); err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if got := pt.String(); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.line, got, tc.want)
		}
	}
}

func TestParsePutErrors(t *testing.T) {
	p := newParser(t, &Options{MaxTags: 2})
	for _, tc := range []struct {
		line, want string
		kind       ErrorKind
	}{
		{"put", "put: illegal argument: not enough arguments (need least 3, got 0)", IllegalArgument},
		{"put m 1", "put: illegal argument: not enough arguments (need least 3, got 2)", IllegalArgument},
		{"put  ", "put: illegal argument: not enough arguments (need least 3, got 2)", IllegalArgument},
		{"put  1 2", "put: illegal argument: empty metric name", IllegalArgument},
		{"put m notatime 2", "put: invalid value: Invalid character 'n' in notatime", InvalidValue},
		{"put m  2 a=b", "put: invalid value: Empty string", InvalidValue},
		{"put m 1.2.3x 2", "put: invalid value: Invalid character 'x' in 123x", InvalidValue},
		{"put m 12345678901234567890 2", "put: invalid value: Value too long: 12345678901234567890", InvalidValue},
		{"put m 0 2", "put: illegal argument: invalid timestamp: 0", IllegalArgument},
		{"put m -5 2", "put: illegal argument: invalid timestamp: -5", IllegalArgument},
		{"put m 1 ", "put: illegal argument: empty value", IllegalArgument},
		{"put m 1  a=b", "put: illegal argument: empty value", IllegalArgument},
		{"put m 1 2 ab", "put: illegal argument: invalid tag: ab", IllegalArgument},
		{"put m 1 2 =b", "put: illegal argument: invalid tag: =b", IllegalArgument},
		{"put m 1 2 a=", "put: illegal argument: invalid tag: a=", IllegalArgument},
		{"put m 1 2 a=b=c", "put: illegal argument: invalid tag: a=b=c", IllegalArgument},
		{"put m 1 2 a=b c=d a=e", "put: illegal argument: duplicate tag: a=e, tags={a=b, c=d}", IllegalArgument},
		{"put m 1 abc", "put: invalid value: Invalid character 'a' in abc", InvalidValue},
		{"put m 1 1.2.3", `put: invalid value: For input string: "1.2.3"`, InvalidValue},
		{"put m 1 99999999999999999999", "put: invalid value: Value too long: 99999999999999999999", InvalidValue},
		{"put m 1 9223372036854775808", "put: invalid value: Overflow in 9223372036854775808", InvalidValue},
		{"put m 1 1e999 a=b", "put: illegal argument: value is NaN or Infinite: Infinity for metric=m timestamp=1", IllegalArgument},
		{"put m 10000000000000 42 a=b", "put: illegal argument: bad timestamp=10000000000000 when trying to add value=[42]/0 to metric=m, tags={a=b}", IllegalArgument},
		{"put m 10000000000000 42.5", "put: illegal argument: bad timestamp=10000000000000 when trying to add value=[66, 42, 0, 0]/11 to metric=m, tags={}", IllegalArgument},
		{"put m 1 2 a=1 b=2 c=3", "put: illegal argument: Too many tags: 3 maximum allowed: 2, tags: {a=1, b=2, c=3}", IllegalArgument},
		{"put x! 1 2 a=b", `put: illegal argument: Invalid metric name ("x!"): illegal character: !`, IllegalArgument},
		{"put m 1 2 a=b h\tst=x", `put: illegal argument: Invalid tag name ("h\tst"): illegal character: U+0009`, IllegalArgument},
		{"put m 1 2 a=+Inf", `put: illegal argument: Invalid tag value ("+Inf"): illegal character: +`, IllegalArgument},
	} {
		var pt parse.Point
		err := p.ParsePut([]byte(tc.line), &pt)
		var pe *PutError
		if !errors.As(err, &pe) || err.Error() != tc.want || pe.Kind != tc.kind {
			t.Errorf("%q:\n got %v\nwant %s", tc.line, err, tc.want)
		}
	}
	special := newParser(t, &Options{AllowSpecialChars: "!+"})
	var pt parse.Point
	if err := special.ParsePut([]byte("put x! 1 2 a=+Inf"), &pt); err != nil || pt.String() != "x!{a=+Inf} 1000 2i" {
		t.Fatalf("allow_specialchars: %v %s", err, pt.String())
	}
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		cmd  Command
		name string
	}{
		{"put m 1 2", Put, "put"}, {"version", Version, "version"}, {"stats", Stats, "stats"}, {"help", Help, "help"},
		{"dropcaches", DropCaches, "dropcaches"}, {"exit", Exit, "exit"}, {"diediedie", DieDieDie, "diediedie"},
		{"rollup 1h-SUM m 1 2", Rollup, "rollup"}, {"histogram m 1 x", Histogram, "histogram"},
		{"PUT m 1 2", Unknown, "PUT"}, {"", Unknown, ""}, {" put", Unknown, ""}, {"foo bar", Unknown, "foo"},
	} {
		cmd, name := SplitCommand([]byte(tc.line))
		if cmd != tc.cmd || string(name) != tc.name {
			t.Errorf("%q: got %v %q", tc.line, cmd, name)
		}
	}
	if got := UnknownCommand([]byte("foo")); got != "unknown command: foo.  Try `help'." {
		t.Fatalf("got %q", got)
	}
	if got := LineTooLong(DefaultMaxLineBytes); got != "line too long: more than 65536 bytes" {
		t.Fatalf("got %q", got)
	}
	if Put.String() != "put" || DieDieDie.String() != "diediedie" || Unknown.String() != "" {
		t.Fatal("String")
	}
}

func TestParsePutAllocatesNothing(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	p := newParser(t, nil)
	line := []byte("put cpu_usage_user 1767225600.000 41.04 hostname=host_0 region=us-east-1 datacenter=us-east-1a rack=90 os=Ubuntu16.04LTS arch=x64 team=CHI service=3 service_version=0 service_environment=test")
	var pt parse.Point
	if a := testing.AllocsPerRun(100, func() {
		if err := p.ParsePut(line, &pt); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocs", a)
	}
}

func TestLinearOnHostileLines(t *testing.T) {
	p := newParser(t, nil)
	var b strings.Builder
	b.WriteString("put m 1 2")
	for i := range 20000 {
		fmt.Fprintf(&b, " k%d=v", i)
	}
	var pt parse.Point
	err := p.ParsePut([]byte(b.String()), &pt)
	// Every tag is listed, in the order of OpenTSDB's HashMap.
	if err == nil || !strings.HasPrefix(err.Error(), "put: illegal argument: Too many tags: 20000 maximum allowed: 32, tags: {k947=v, k18027=v, ") ||
		strings.Count(err.Error(), "=v") != 20000 {
		t.Fatalf("got %.100v", err)
	}
}

// TestParsePutMemo: lines sharing their tag section with the line before
// (answered from the parser's memo of it) parse exactly as they do with a
// parser that never saw another line, errors included.
func TestParsePutMemo(t *testing.T) {
	tags := " host=web01 cpu=0 dc=lga"
	lines := []string{
		"put sys.cpu.user 1356998400 42" + tags,
		"put sys.cpu.nice 1356998400 1.5" + tags,
		"put bad! 1356998400 1" + tags,
		"put sys.cpu.idle 1356998400 7" + tags,
		"put sys.cpu.idle 1356998400 x" + tags,
		"put sys.cpu.idle 1356998400 7 host=web01 host=web01 cpu=0",
		"put sys.cpu.sys 1356998400 8 host=web01 host=web01 cpu=0",
		"put sys.cpu.sys 1356998400 8 host=web01 host=web02",
		"put sys.cpu.sys 1356998401 9 host=web01 host=web02",
		"put sys.cpu.sys 1356998401 9 host=wéb01",
		"put sys.cpu.sys 1356998402 9 host=wéb01",
		"put sys.cpu.sys 1356998402 9 h!=x",
		"put sys.cpu.sys 1356998403 9 h!=x",
		"put sys.cpu.sys 1356998403 9 a=1 b=2 c=3",
		"put sys.cpu.sys 1356998404 9 a=1 b=2 c=3",
		"put sys.cpu.sys 1356998404 9 a=1  b=2 c=3",
		"put sys.cpu.sys 1356998404 9",
		"put sys.cpu.sys 1356998404 9",
	}
	p := newParser(t, &Options{MaxTags: 2})
	for _, line := range lines {
		got, gotErr := parseString(p, line)
		want, wantErr := parseString(newParser(t, &Options{MaxTags: 2}), line)
		if got != want || gotErr != wantErr {
			t.Errorf("%q: got %q %q, want %q %q", line, got, gotErr, want, wantErr)
		}
	}
	p = newParser(t, nil)
	var pt parse.Point
	for i, line := range lines[:2] {
		if err := p.ParsePut([]byte(line), &pt); err != nil {
			t.Fatal(err)
		}
		if want := []string{"sys.cpu.user{host=web01,cpu=0,dc=lga} 1356998400000 42i",
			"sys.cpu.nice{host=web01,cpu=0,dc=lga} 1356998400000 1.5f32"}[i]; pt.String() != want {
			t.Fatalf("got %s, want %s", pt.String(), want)
		}
	}
}

// TestParsePutMemoMany: tag sections of 100 hosts interleaved (more than
// the memo holds, so entries are replaced), some with names the validator
// refuses, each line as a fresh parser parses it.
func TestParsePutMemoMany(t *testing.T) {
	p := newParser(t, nil)
	for round := range 3 {
		for h := range 100 {
			for m := range 3 {
				host := fmt.Sprintf("host_%d", h)
				if h%17 == 0 {
					host += "!" // refused by the name rules
				}
				line := fmt.Sprintf("put cpu.m%d %d %d host=%s dc=dc%d rack=%d", m, 1356998400+round, h, host, h%3, h%7)
				got, gotErr := parseString(p, line)
				want, wantErr := parseString(newParser(t, nil), line)
				if got != want || gotErr != wantErr {
					t.Fatalf("%q: got %q %q, want %q %q", line, got, gotErr, want, wantErr)
				}
			}
		}
	}
}
