package putjson

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tsd-db/tsd/internal/invariants"
)

// itemsFrom is items in reader mode.
func itemsFrom(d *Decoder, r io.Reader) []string {
	d.ResetReader(r)
	var out []string
	for d.Next() {
		if pe := d.PointError(); pe != nil {
			out = append(out, "ERR "+pe.Error()+" | "+string(d.Raw()))
			continue
		}
		out = append(out, d.Point().String())
	}
	if d.Err() != nil {
		out = append(out, "FATAL "+d.Err().Error())
	}
	return out
}

// splitReader returns body in reads whose sizes cycle through sizes.
type splitReader struct {
	body  []byte
	sizes []int
	i     int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.body) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(s.body))
	if len(s.sizes) > 0 {
		n = min(n, max(s.sizes[s.i%len(s.sizes)], 0))
		s.i++
	}
	n = copy(p, s.body[:n])
	s.body = s.body[n:]
	return n, nil
}

// readerBodies are bodies of every shape: good, bad points, syntax errors
// of every kind, Telegraf's newlines, escapes, bare scalars.
func readerBodies() []string {
	good := `{"metric":"m","timestamp":1,"value":1}`
	bodies := []string{
		"", "  \n", "blah", "[]", " [ ] ", "[] x", good + " x", good + "   \n ",
		"[" + good + "," + good, "[" + good + " " + good + "]",
		`[{"metric":"m" "timestamp":1}]`, `[{"metric" "m"}]`, `[{metric:"m"}]`,
		`[{"metric":"m\x"}]`, `[{"metric":"m\u12"}]`, "[{\"metric\":\"a\nb\"}]", `[{"metric":"m`,
		`[{"value":01}]`, `[{"value":1.}]`, `[{"value":-}]`, `[{"value":tru}]`, `[{"x":[1,2}]`,
		`[{"x":{"a":1]}]`, `[{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]`,
		`[12345, true, "str\"ing", null, -1.5e+7, truex]`, `[12345`, `[1,2`, `["ab\ud83d\ude00c"]`, `["ab\ud83d\u"]`,
		`[{"metric":"s\u00e9\/x","timestamp":1,"value":1,"tags":{"k\u00e9":"\u4e2d\ud840\udc00"}}]`,
		`{"metric":"sys.cpu","timestamp":1356998400500,"value":"42","tags":{"host":"web01"}}`,
		`[{"metric":"cpu_usage_idle","timestamp":1763801234,"value":97.48743718592965,"tags":{"cpu":"cpu-total","host":"myhost"}}
,{"metric":"big","timestamp":1763801234,"value":1e+21,"tags":{"host":"myhost"}}
,{"metric":"small","timestamp":1763801234,"value":5e-07,"tags":{"host":"myhost"}}
]`,
	}
	for _, e := range []string{
		`{"timestamp":123456,"value":6.7,"tags":{"test":"test"}}`, `{"metric":"test","timestamp":"test","value":6.7}`,
		`{"metric":"test","timestamp":1,"value":"1.2.3"}`, `{"metric":"m","timestamp":1,"value":1e999}`,
		`{"metric":"m","timestamp":1,"value":1,"tags":{"a":"1","b":"2","c":"3"}}`, `{"metric":{"test":"test"},"timestamp":1,"value":1}`,
		`{"metric":"m","timestamp":1,"value":1,"tags":{"a":null}}`, `42`, `null`,
	} {
		bodies = append(bodies, "[\n"+e+"\n,"+good+"]")
	}
	return bodies
}

// TestReaderMatchesWhole: reader mode yields what Reset yields on the
// whole body, whatever the reads' sizes: one byte at a time, the body cut
// in two at every position, reads that return data with io.EOF.
func TestReaderMatchesWhole(t *testing.T) {
	d := newDecoder(t, &Options{MaxTags: 2})
	for _, body := range readerBodies() {
		want := items(d, body)
		check := func(how string, r io.Reader) {
			t.Helper()
			if got := itemsFrom(d, r); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%q %s:\ngot:\n%s\nwant:\n%s", body, how, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		check("whole", strings.NewReader(body))
		check("one byte reads", iotest.OneByteReader(strings.NewReader(body)))
		check("data with EOF", iotest.DataErrReader(strings.NewReader(body)))
		check("empty reads", &splitReader{body: []byte(body), sizes: []int{0, 3, 0, 0, 7}})
		for i := range len(body) {
			check("cut at "+strconv.Itoa(i), io.MultiReader(strings.NewReader(body[:i]), strings.NewReader(body[i:])))
		}
	}
}

// TestReaderLongBody: a body many times the window streams through it;
// the window stays at its first size and every point is read.
func TestReaderLongBody(t *testing.T) {
	bodies, n := jsonBodies(t, 20_000)
	whole := append([]byte{'['}, bytes.Join(trimArrays(bodies), []byte(",\n"))...)
	whole = append(whole, ']')
	d := newDecoder(t, nil)
	for _, r := range []io.Reader{bytes.NewReader(whole), &splitReader{body: whole, sizes: []int{1, 100, 5000, 70000, 13}}} {
		d.ResetReader(r)
		k := 0
		for d.Next() {
			if pe := d.PointError(); pe != nil {
				t.Fatal(pe)
			}
			k++
		}
		if d.Err() != nil || k != n || d.InputLen() != len(whole) {
			t.Fatalf("%d of %d points, %d of %d bytes: %v", k, n, d.InputLen(), len(whole), d.Err())
		}
		if c := cap(d.rd.win); c > firstWindow {
			t.Fatalf("window grew to %d bytes for %d-byte elements", c, len(whole)/n)
		}
	}
}

// trimArrays returns the bodies' elements: each body without its brackets.
func trimArrays(bodies [][]byte) [][]byte {
	out := make([][]byte, len(bodies))
	for i, b := range bodies {
		out[i] = bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(b), []byte{'['}), []byte{']'})
	}
	return out
}

func TestReaderElementLimit(t *testing.T) {
	d := newDecoder(t, &Options{MaxElementBytes: 100})
	good := `{"metric":"m","timestamp":1,"value":1}`
	long := `{"metric":"m","timestamp":1,"value":1,"tags":{"k":"` + strings.Repeat("v", 100) + `"}}`
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"[" + good + "," + long + "," + good + "]", []string{"m{} 1000 1i",
			"FATAL data point 1 (at byte 40) is larger than the limit of 100 bytes"}},
		{long, []string{"FATAL data point 0 (at byte 0) is larger than the limit of 100 bytes"}},
		{`[` + good + `,"` + strings.Repeat("s", 200) + `"]`, []string{"m{} 1000 1i",
			"FATAL data point 1 (at byte 40) is larger than the limit of 100 bytes"}},
		// A syntax error well inside a long element is the syntax error.
		{`[{"x":` + strings.Repeat("[", 1000), []string{"FATAL JSON nested too deep at byte 70"}},
	} {
		for _, r := range []io.Reader{strings.NewReader(tc.body), iotest.OneByteReader(strings.NewReader(tc.body))} {
			check(t, itemsFrom(d, r), tc.want)
		}
	}
	// The window stays within the limit and its slack.
	d2 := newDecoder(t, &Options{MaxElementBytes: 100 << 10})
	itemsFrom(d2, strings.NewReader(`[{"x":"`+strings.Repeat("y", 1<<20)+`"}]`))
	if c := cap(d2.rd.win); c > 100<<10+WindowSlack {
		t.Fatalf("window of %d bytes for a limit of %d", c, 100<<10)
	}
	var te *TooLargeError
	d.ResetReader(strings.NewReader(long))
	if d.Next() || !errors.As(d.Err(), &te) || te.Index != 0 {
		t.Fatalf("%v", d.Err())
	}
	// Reset has no element limit.
	check(t, items(d, long), []string{"m{k=" + strings.Repeat("v", 100) + "} 1000 1i"})
}

// TestReaderReadError: a read error stops the Decoder with that error,
// not a syntax error, after the points read before it.
func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	good := `{"metric":"m","timestamp":1,"value":1}`
	d := newDecoder(t, nil)
	for _, body := range []string{"", "[", "[" + good + ",", "[" + good + `,{"metric":"m`, good, "[" + good + "]"} {
		d.ResetReader(io.MultiReader(strings.NewReader(body), iotest.ErrReader(boom)))
		for d.Next() {
		}
		if !errors.Is(d.Err(), boom) {
			t.Errorf("%q: %v", body, d.Err())
		}
	}
}

func TestReaderSteadyStateAllocatesNothing(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	bodies, _ := jsonBodies(t, 3000)
	d := newDecoder(t, nil)
	var r bytes.Reader
	sr := &splitReader{sizes: []int{1000, 10, 333}}
	run := func() {
		for _, b := range bodies {
			r.Reset(b)
			d.ResetReader(&r)
			for d.Next() {
				if d.PointError() != nil {
					t.Fatal(d.PointError())
				}
			}
			sr.body, sr.i = b, 0
			d.ResetReader(sr)
			for d.Next() {
			}
			if d.Err() != nil {
				t.Fatal(d.Err())
			}
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// FuzzReaderMatchesWhole: on any body, reader mode with reads of
// fuzzed sizes yields the same points, point errors, raw elements and
// final error as Reset on the whole body.
func FuzzReaderMatchesWhole(f *testing.F) {
	for i, b := range readerBodies() {
		f.Add(b, []byte{byte(i), 1, 7, 0, 64})
	}
	whole := newDecoder(f, &Options{MaxTags: 4})
	streamed := newDecoder(f, &Options{MaxTags: 4})
	f.Fuzz(func(t *testing.T, body string, sizes []byte) {
		want := items(whole, body)
		sr := &splitReader{body: []byte(body)}
		for _, s := range sizes {
			sr.sizes = append(sr.sizes, int(s))
		}
		if len(sr.sizes) > 0 && sr.sizes[0] == 0 {
			sr.sizes[0] = 1 // not only empty reads
		}
		got := itemsFrom(streamed, sr)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q in reads of %v:\ngot:\n%s\nwant:\n%s", body, sizes, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
