package influx

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// items decodes body and formats every point and bad line, one per entry.
func items(t testing.TB, d *Decoder, r io.Reader, body string, prec Precision, now int64) []string {
	if r != nil {
		d.ResetReader(r, prec, now)
	} else {
		d.Reset([]byte(body), prec, now)
	}
	var out []string
	for d.Next() {
		if le := d.LineError(); le != nil {
			out = append(out, "ERR "+le.Error())
			continue
		}
		out = append(out, d.Point().String())
	}
	if d.Err() != nil {
		t.Fatalf("read error: %v", d.Err())
	}
	return out
}

// decodeAll decodes body as bytes and as a one-byte-at-a-time stream and
// checks both agree.
func decodeAll(t testing.TB, opts *Options, body string, prec Precision, now int64) ([]string, Stats) {
	d, err := NewDecoder(opts)
	if err != nil {
		t.Fatal(err)
	}
	got := items(t, d, nil, body, prec, now)
	st := d.Stats()
	stream := items(t, d, iotest.OneByteReader(strings.NewReader(body)), body, prec, now)
	if fmt.Sprint(stream) != fmt.Sprint(got) || d.Stats() != st {
		t.Fatalf("stream:\n%s\nbytes:\n%s", strings.Join(stream, "\n"), strings.Join(got, "\n"))
	}
	return got, st
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDecodeValues(t *testing.T) {
	body := `cpu,host=a,region=eu usage_idle=97.5,usage_user=2i,ok=true,up=F,name="x y",big=18446744073709551615u,small=12u,neg=-3i,e=-1.5e3,dot=.5 1700000000000000000
`
	got, st := decodeAll(t, nil, body, Nanosecond, 0)
	check(t, got, []string{
		"cpu_usage_idle{host=a,region=eu} 1700000000000 97.5f64",
		"cpu_usage_user{host=a,region=eu} 1700000000000 2i",
		"cpu_ok{host=a,region=eu} 1700000000000 1i",
		"cpu_up{host=a,region=eu} 1700000000000 0i",
		"cpu_big{host=a,region=eu} 1700000000000 1.8446744073709552e+19f64",
		"cpu_small{host=a,region=eu} 1700000000000 12i",
		"cpu_neg{host=a,region=eu} 1700000000000 -3i",
		"cpu_e{host=a,region=eu} 1700000000000 -1500f64",
		"cpu_dot{host=a,region=eu} 1700000000000 0.5f64",
	})
	if st != (Stats{Lines: 1, Points: 9, StringFields: 1}) {
		t.Fatalf("stats %+v", st)
	}
}

func TestDecodeBooleans(t *testing.T) {
	var lines []string
	var want []string
	for i, b := range []string{"t", "T", "true", "True", "TRUE", "f", "F", "false", "False", "FALSE"} {
		lines = append(lines, fmt.Sprintf("m b=%s %d", b, i))
		want = append(want, fmt.Sprintf("m_b{} %d %di", i, map[bool]int{true: 1}[i < 5]))
	}
	got, _ := decodeAll(t, nil, strings.Join(lines, "\n"), Millisecond, 0)
	check(t, got, want)
}

func TestDecodeEscapesAndNames(t *testing.T) {
	body := `we\ ird\,m\=,ta\=g\ k=va\,l\ ue,path=a\tb\n fi\=eld\ k=1,x\\y=2 1
中文,标签=值 字段=1 2
`
	got, _ := decodeAll(t, &Options{Separator: "."}, body, Second, 0)
	check(t, got, []string{
		`we ird,m\=.fi=eld k{ta=g k=va,l ue,path=a\tb\n} 1000 1f64`,
		`we ird,m\=.x\\y{ta=g k=va,l ue,path=a\tb\n} 1000 2f64`,
		`中文.字段{标签=值} 2000 1f64`,
	})
}

func TestDecodeSkipsAndTimes(t *testing.T) {
	body := "# comment\n\n   \r\n\t# indented comment\ncpu v=1 5\r\ncpu v=2\n  cpu  v=3   7  \n"
	got, st := decodeAll(t, nil, body, Second, 1700000000123)
	check(t, got, []string{
		"cpu_v{} 5000 1f64",
		"cpu_v{} 1700000000000 2f64",
		"cpu_v{} 7000 3f64",
	})
	if st.Lines != 3 {
		t.Fatalf("stats %+v", st)
	}
	for _, tc := range []struct {
		prec Precision
		ts   string
		want string
	}{
		{Nanosecond, "1700000000123456789", "1700000000123"},
		{Microsecond, "1700000000123456", "1700000000123"},
		{Millisecond, "1700000000123", "1700000000123"},
		{Minute, "2", "120000"},
		{Hour, "2", "7200000"},
		{Nanosecond, "0", "0"},
	} {
		got, _ := decodeAll(t, nil, "m v=1i "+tc.ts, tc.prec, 0)
		check(t, got, []string{"m_v{} " + tc.want + " 1i"})
	}
}

func TestDecodeMultilineStrings(t *testing.T) {
	body := "cpu s=\"a\nb \\\" c\",v=2 1\ncpu v=3,s=\"x\\\\\" 2\ncpu s=\"abc\ncpu v=4 3\ncpu v=5 4\n"
	got, st := decodeAll(t, nil, body, Nanosecond, 0)
	check(t, got, []string{
		"cpu_v{} 0 2f64",
		"cpu_v{} 0 3f64",
		`ERR unable to parse 'cpu s="abc': unbalanced quotes (line 4)`,
		"cpu_v{} 0 4f64",
		"cpu_v{} 0 5f64",
	})
	if st.StringFields != 2 || st.BadLines != 1 || st.Lines != 5 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ line, reason string }{
		{"cpu,host=a usage=", "missing field value"},
		{"cpu,host=a usage=,b=1", "missing field value"},
		{",host=a v=1", "missing measurement"},
		{"cpu", "missing fields"},
		{"cpu ", "missing fields"},
		{"cpu,host=a", "missing fields"},
		{"cpu,=a v=1", "missing tag key"},
		{"cpu, v=1", "missing tag key"},
		{"cpu,host v=1", "missing tag value"},
		{"cpu,host= v=1", "missing tag value"},
		{"cpu,host=a=b v=1", "invalid tag format"},
		{"cpu,host=a,host=b v=1", "duplicate tags"},
		{"cpu =1", "missing field key"},
		{"cpu v", "invalid field format"},
		{"cpu v=1,", "invalid field format"},
		{"cpu v=1,,w=2", "invalid field format"},
		{"cpu v=\"abc\"x", "invalid field format"},
		{"cpu v=1x", "invalid number"},
		{"cpu v=-", "invalid number"},
		{"cpu v=1.5i", "invalid number"},
		{"cpu v=1.2.3", "invalid number"},
		{"cpu v=NaN", "invalid number"},
		{"cpu v=9223372036854775808i", "unable to parse integer 9223372036854775808: value out of range"},
		{"cpu v=-1u", "invalid number"},
		{"cpu v=18446744073709551616u", "unable to parse unsigned 18446744073709551616: value out of range"},
		{"cpu v=1e999", "invalid float"},
		{"cpu v=yes", "invalid boolean"},
		{"cpu v=+1", "invalid boolean"},
		{"cpu v=1 12a", "bad timestamp"},
		{"cpu v=1 12 x", "point is invalid"},
		{"cpu v=1 99999999999999999999", "bad timestamp"},
		{"cpu v=1 -5", "bad timestamp: before 1970-01-01, which tsd does not store"},
		{"cpu,k=a\x01 v=1", `Invalid tag value ("a\x01"): illegal character: U+0001`},
		{"c\x7fpu v=1", `Invalid metric name ("c\x7fpu"): illegal character: U+007F`},
		{"cpu v\xff=1", `Invalid metric name ("v\xff"): not valid UTF-8`},
	} {
		got, st := decodeAll(t, nil, tc.line+"\ncpu ok=1i 1\n", Nanosecond, 0)
		check(t, got, []string{
			fmt.Sprintf("ERR unable to parse '%s': %s (line 1)", tc.line, tc.reason),
			"cpu_ok{} 0 1i",
		})
		if st != (Stats{Lines: 2, BadLines: 1, Points: 1}) {
			t.Fatalf("%q: stats %+v", tc.line, st)
		}
	}
	got, _ := decodeAll(t, nil, "cpu v=1 9223372036854775807", Hour, 0)
	check(t, got, []string{"ERR unable to parse 'cpu v=1 9223372036854775807': time outside range (line 1)"})
}

func TestDecodeLimits(t *testing.T) {
	got, _ := decodeAll(t, &Options{MaxTags: 2}, "cpu,a=1,b=2 v=1 1\ncpu,a=1,b=2,c=3 v=1 1", Nanosecond, 0)
	check(t, got, []string{"cpu_v{a=1,b=2} 0 1f64", "ERR unable to parse 'cpu,a=1,b=2,c=3 v=1 1': too many tags: more than 2 (line 2)"})
	long := "cpu,host=" + strings.Repeat("h", 2000) + " v=1"
	got, _ = decodeAll(t, &Options{MaxLineBytes: 1500}, "cpu v=1 1\n"+long+"\ncpu v=2 2", Nanosecond, 0)
	check(t, got, []string{"cpu_v{} 0 1f64",
		"ERR unable to parse '" + long[:MaxErrorText] + "...': line too long: more than 1500 bytes (line 2)",
		"cpu_v{} 0 2f64"})
}

func TestOptionsAndPrecision(t *testing.T) {
	if _, err := NewDecoder(&Options{Separator: "\t"}); err == nil {
		t.Fatal("tab separator accepted")
	}
	if _, err := NewDecoder(&Options{MaxTags: -1}); err == nil {
		t.Fatal("negative max tags accepted")
	}
	for s, want := range map[string]Precision{"": Nanosecond, "n": Nanosecond, "ns": Nanosecond, "u": Microsecond,
		"us": Microsecond, "ms": Millisecond, "s": Second, "m": Minute, "h": Hour} {
		if p, err := ParsePrecision(s); err != nil || p != want {
			t.Errorf("%q: %v %v", s, p, err)
		}
	}
	if _, err := ParsePrecision("d"); err == nil || err.Error() != `invalid precision "d" (use n, u, ms, s, m or h)` {
		t.Errorf("d: %v", err)
	}
}
