package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type gotLine struct {
	num  int
	text string
	long bool
}

// readAll collects every line, extending a line while ext says so.
func readAll(l *LineReader, ext func([]byte) bool) []gotLine {
	var out []gotLine
	for l.Next() {
		for ext != nil && ext(l.Line()) && l.Extend() {
		}
		out = append(out, gotLine{l.Num(), string(l.Line()), l.TooLong()})
	}
	return out
}

// both runs the reader over body as bytes and as streams of several shapes,
// and checks they agree.
func both(t *testing.T, body string, max int, ext func([]byte) bool) []gotLine {
	t.Helper()
	var l LineReader
	l.Reset([]byte(body), max)
	want := readAll(&l, ext)
	for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body)),
		iotest.HalfReader(strings.NewReader(body)), iotest.DataErrReader(strings.NewReader(body))} {
		l.ResetReader(r, max)
		got := readAll(&l, ext)
		if l.Err() != nil {
			t.Fatalf("stream error %v", l.Err())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("stream %T: %v, bytes %v", r, got, want)
		}
	}
	return want
}

func TestLineReader(t *testing.T) {
	got := both(t, "a\r\nbb\n\nccc\r\n last", 0, nil)
	want := []gotLine{{1, "a", false}, {2, "bb", false}, {3, "", false}, {4, "ccc", false}, {5, " last", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	if got := both(t, "", 0, nil); len(got) != 0 {
		t.Fatalf("empty body: %v", got)
	}
	if got := both(t, "x\n", 0, nil); fmt.Sprint(got) != fmt.Sprint([]gotLine{{1, "x", false}}) {
		t.Fatalf("one line: %v", got)
	}
}

func TestLineReaderTooLong(t *testing.T) {
	body := "ok\n" + strings.Repeat("x", 100) + "\nfine\n" + strings.Repeat("y", 11) + "\nabcdefghij\n" + strings.Repeat("z", 50)
	got := both(t, body, 10, nil)
	want := []gotLine{{1, "ok", false}, {2, "xxxxxxxxxx", true}, {3, "fine", false}, {4, "yyyyyyyyyy", true},
		{5, "abcdefghij", false}, {6, "zzzzzzzzzz", true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	// A stream never buffers more than the limit plus room for a chunk.
	var l LineReader
	l.ResetReader(strings.NewReader(strings.Repeat("q", 10<<20)+"\nend\n"), 1000)
	lines := readAll(&l, nil)
	if len(lines) != 2 || !lines[0].long || lines[1].text != "end" || cap(l.buf) > 64<<10 {
		t.Fatalf("lines %d, cap %d", len(lines), cap(l.buf))
	}
}

func TestLineReaderExtend(t *testing.T) {
	open := func(b []byte) bool { return bytes.Count(b, []byte{'"'})%2 == 1 }
	got := both(t, "a \"x\ny\r\nz\" b\nnext\n\"unclosed\nq", 0, open)
	want := []gotLine{{1, "a \"x\ny\r\nz\" b", false}, {4, "next", false}, {5, "\"unclosed\nq", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v", got)
	}
	// Rewind gives back the lines an extension swallowed.
	var l LineReader
	for _, stream := range []bool{false, true} {
		body := "\"open\nb\nc\n"
		if stream {
			l.ResetReader(iotest.OneByteReader(strings.NewReader(body)), 0)
		} else {
			l.Reset([]byte(body), 0)
		}
		l.Next()
		for l.Extend() {
		}
		if string(l.Line()) != "\"open\nb\nc" {
			t.Fatalf("extended %q", l.Line())
		}
		l.Rewind()
		var rest []string
		for l.Next() {
			rest = append(rest, fmt.Sprint(l.Num(), " ", string(l.Line())))
		}
		if fmt.Sprint(rest) != "[2 b 3 c]" {
			t.Fatalf("after rewind %v", rest)
		}
	}
	// Extension stops at the limit and leaves the line as it was.
	got = both(t, "\"abc\ndefghijk\nl\"\n", 10, open)
	want = []gotLine{{1, "\"abc", false}, {2, "defghijk", false}, {3, "l\"", false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("limit: got %v", got)
	}
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	var l LineReader
	l.ResetReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 0)
	if !l.Next() || string(l.Line()) != "a" {
		t.Fatal("first line")
	}
	if l.Next() || !errors.Is(l.Err(), boom) {
		t.Fatalf("got %v", l.Err())
	}
}

// FuzzLineReader: streaming and in-memory splitting agree, and joined lines
// give back the body.
func FuzzLineReader(f *testing.F) {
	f.Add("a\nb\r\n\nc", 3)
	f.Add(strings.Repeat("x", 40)+"\n\"q\nz\"", 8)
	f.Fuzz(func(t *testing.T, body string, max int) {
		max = max%64 + 1
		open := func(b []byte) bool { return bytes.Count(b, []byte{'"'})%2 == 1 }
		both(t, body, max, open)
		var l LineReader
		l.Reset([]byte(body), 0)
		var joined []string
		for l.Next() {
			joined = append(joined, string(l.data[l.start:l.end]))
		}
		if j := strings.Join(joined, "\n"); j != strings.TrimSuffix(body, "\n") {
			t.Fatalf("joined %q, body %q", j, body)
		}
	})
}
