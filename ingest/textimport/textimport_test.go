package textimport

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/ingest/telnet"
)

// read drains r into point strings and "bad: line N: ..." entries.
func read(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for r.Next() {
		if err := r.Bad(); err != nil {
			out = append(out, "bad: "+err.Error())
			continue
		}
		out = append(out, r.Point().String())
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	return out
}

func TestReaderLines(t *testing.T) {
	in := "sys.cpu 1356998400 42 host=web01 cpu=0\n" +
		"\n# a comment\n" +
		"sys.cpu 1356998400500 1.5 host=web01\r\n" +
		"sys.cpu x 1 host=a\n" +
		"sys.cpu 1356998401 1\n" +
		"bad!name 1356998401 1 host=a\n" +
		"m 1356998402 0.1 k=v"
	r, err := NewReader(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, r)
	want := []string{
		"sys.cpu{host=web01,cpu=0} 1356998400000 42i",
		"sys.cpu{host=web01} 1356998400500 1.5f32",
		"bad: line 5: put: invalid value: Invalid character 'x' in x",
		"sys.cpu{} 1356998401000 1i",
		`bad: line 7: put: illegal argument: Invalid metric name ("bad!name"): illegal character: !`,
		"m{k=v} 1356998402000 0.1f64",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReaderEscapes(t *testing.T) {
	in := `a\ b 1356998400 1 k\=1=v\ 2 x=back\\slash` + "\n" +
		`a\ b 1356998400 1 k=v` + "\n" + // a space needs allow_specialchars
		`m 1 1 k=a\qb` + "\n"
	r, err := NewReader(strings.NewReader(in), &Options{AllowSpecialChars: " =\\"})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, r)
	want := []string{`a b{k=1=v 2,x=back\slash} 1356998400000 1i`, `a b{k=v} 1356998400000 1i`, `m{k=a\qb} 1000 1i`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r, _ = NewReader(strings.NewReader(in), nil)
	got = read(t, r)
	if len(got) != 3 || !strings.HasPrefix(got[0], `bad: line 1: put: illegal argument: Invalid metric name ("a b")`) ||
		!strings.HasPrefix(got[2], "bad: line 3:") {
		t.Errorf("without special characters: %q", got)
	}
	var le *LineError
	var pe *telnet.PutError
	r, _ = NewReader(strings.NewReader("m\\ 1 1 k=\x01\n"), nil)
	if !r.Next() || !errors.As(r.Bad(), &le) || le.Line != 1 || errors.As(r.Bad(), &pe) {
		t.Errorf("control byte: %v", r.Bad())
	}
}

func TestReaderGzipByMagic(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("m 1356998400 1 k=v\nm 1356998401 2 k=v\n"))
	zw.Close()
	r, err := NewReader(bytes.NewReader(b.Bytes()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, r); len(got) != 2 || got[1] != "m{k=v} 1356998401000 2i" {
		t.Errorf("gzip: %q", got)
	}
	if r.InputBytes() != int64(b.Len()) {
		t.Errorf("InputBytes %d, want %d", r.InputBytes(), b.Len())
	}
	trunc := b.Bytes()[:b.Len()-6]
	r, _ = NewReader(bytes.NewReader(trunc), nil)
	for r.Next() {
	}
	if r.Err() == nil {
		t.Error("truncated gzip: no Err")
	}
}

func TestReaderLongLine(t *testing.T) {
	in := "m 1 1 k=" + strings.Repeat("v", 100) + "\nm 2 2 k=v\n"
	r, _ := NewReader(strings.NewReader(in), &Options{MaxLineBytes: 50})
	got := read(t, r)
	if len(got) != 2 || got[0] != "bad: line 1: line too long (over 50 bytes)" || got[1] != "m{k=v} 2000 2i" {
		t.Errorf("got %q", got)
	}
}
