package telnet

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tsd-db/tsd/ingest/parse"
)

// TestSessionShape runs a connection's worth of lines the way the handler
// will: a LineReader over the stream, SplitCommand, ParsePut, and the
// reply each line gets (none for a good put).
func TestSessionShape(t *testing.T) {
	input := "put sys.cpu 1356998400 42 host=a\r\n" +
		"version\n" +
		"put cpu_usage_idle 1763801234 97.487437 \n" +
		"put m " + strings.Repeat("9", 100) + " 1\n" +
		"\n" +
		"put bad 1 x host=a\n" +
		"HELP\n" +
		"put m 1 2 a=b"
	var lr parse.LineReader
	lr.ResetReader(iotest.OneByteReader(strings.NewReader(input)), 64)
	p := newParser(t, nil)
	var pt parse.Point
	var got []string
	for lr.Next() {
		if lr.TooLong() {
			got = append(got, LineTooLong(64))
			continue
		}
		switch cmd, name := SplitCommand(lr.Line()); cmd {
		case Put:
			if err := p.ParsePut(lr.Line(), &pt); err != nil {
				got = append(got, err.Error())
			} else {
				got = append(got, "ok "+pt.String())
			}
		case Unknown:
			got = append(got, UnknownCommand(name))
		default:
			got = append(got, "command "+cmd.String())
		}
	}
	want := []string{
		"ok sys.cpu{host=a} 1356998400000 42i",
		"command version",
		"ok cpu_usage_idle{} 1763801234000 97.487437f64",
		"line too long: more than 64 bytes",
		"unknown command: .  Try `help'.",
		"put: invalid value: Invalid character 'x' in x",
		"unknown command: HELP.  Try `help'.",
		"ok m{a=b} 1000 2i",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
