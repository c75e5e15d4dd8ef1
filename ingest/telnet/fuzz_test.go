package telnet

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/uid"
)

// FuzzParsePut: arbitrary lines never panic; an error is a *PutError with
// one of the two prefixes; a good point has valid names, a positive time,
// and aliases the line.
func FuzzParsePut(f *testing.F) {
	for _, s := range []string{
		"put sys.cpu.user 1356998400 42 host=web01 cpu=0",
		"put cpu_usage_idle 1763801234 97.487437 ",
		"put m 1356998400.500 1.3E3 a=b a=b",
		"put m 10000000000000 42.5 a=b c=d a=e",
		"put x! 1 1e999 h\tst=x",
		"version",
	} {
		f.Add(s)
	}
	v := uid.NewValidator(uid.RulesOpenTSDB, "")
	p := newParser(f, &Options{MaxTags: 4})
	fresh := newParser(f, &Options{MaxTags: 4})
	f.Fuzz(func(t *testing.T, line string) {
		var pt parse.Point
		err := p.ParsePut([]byte(line), &pt)
		// Parsed again, the line's tags come from the memo of the first
		// parse; a parser that saw another line first must agree.
		again, errAgain := parseString(p, line)
		fresh.ParsePut([]byte("put m 1 1 other=tags"), &parse.Point{})
		other, errOther := parseString(fresh, line)
		if want := describe(&pt, err); again+errAgain != want || other+errOther != want {
			t.Fatalf("%q: first %q, again %q, after another line %q", line, want, again+errAgain, other+errOther)
		}
		if err != nil {
			var pe *PutError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "put: illegal argument: ") && !strings.HasPrefix(err.Error(), "put: invalid value: ") {
				t.Fatalf("%q: %v", line, err)
			}
			return
		}
		if v.Validate(uid.Metric, pt.Metric) != nil || pt.Value.T <= 0 || len(pt.Tags) > 4 {
			t.Fatalf("%q: bad point %s", line, pt.String())
		}
		for _, tag := range pt.Tags {
			if v.Validate(uid.TagK, tag.Key) != nil || v.Validate(uid.TagV, tag.Value) != nil {
				t.Fatalf("%q: bad tag %q=%q", line, tag.Key, tag.Value)
			}
		}
		SplitCommand([]byte(line))
	})
}

// FuzzRoundTrip formats a point as a telnet line, as tcollector and
// Telegraf do, and parses it back.
func FuzzRoundTrip(f *testing.F) {
	f.Add("sys.cpu.user", "host", "web01", int64(1356998400), int64(42), 97.487437, false)
	f.Add("Ünï/cödé", "中文", "值", int64(1356998400500), int64(-1), 1e21, true)
	p := newParser(f, nil)
	v := uid.NewValidator(uid.RulesOpenTSDB, "")
	f.Fuzz(func(t *testing.T, metric, k, val string, ts, iv int64, fv float64, useFloat bool) {
		if v.ValidateString(uid.Metric, metric) != nil || v.ValidateString(uid.TagK, k) != nil ||
			v.ValidateString(uid.TagV, val) != nil || ts <= 0 || ts > 9999999999999 || math.IsNaN(fv) || math.IsInf(fv, 0) {
			return
		}
		value := strconv.FormatInt(iv, 10)
		if useFloat {
			value = strconv.FormatFloat(fv, 'f', 6, 64) // Telegraf's format
		}
		line := "put " + metric + " " + strconv.FormatInt(ts, 10) + " " + value + " " + k + "=" + val
		var pt parse.Point
		if err := p.ParsePut([]byte(line), &pt); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		wantT := ts * 1000
		if uint64(ts)>>32 != 0 {
			wantT = ts
		}
		if string(pt.Metric) != metric || len(pt.Tags) != 1 || string(pt.Tags[0].Key) != k || string(pt.Tags[0].Value) != val || pt.Value.T != wantT {
			t.Fatalf("%q: got %s", line, pt.String())
		}
		want, _ := parse.ParseOpenTSDBValue([]byte(value))
		if !useFloat && (!pt.Value.IsInt() || pt.Value.Int() != iv) || pt.Value.Bits != want.Bits || pt.Value.Kind != want.Kind {
			t.Fatalf("%q: value %+v, want %+v", line, pt.Value, want)
		}
	})
}

// parseString parses line with p and describes the outcome.
func parseString(p *Parser, line string) (string, string) {
	var pt parse.Point
	err := p.ParsePut([]byte(line), &pt)
	if err != nil {
		return "", err.Error()
	}
	return pt.String(), ""
}

func describe(pt *parse.Point, err error) string {
	if err != nil {
		return err.Error()
	}
	return pt.String()
}

// FuzzParseRollup: arbitrary rollup lines never panic; an error is a
// *PutError; a parsed line has a spec word and a positive timestamp whose
// milliseconds are the point's (seconds are multiplied).
func FuzzParseRollup(f *testing.F) {
	for _, s := range []string{
		"rollup 1h-SUM sys.if.bytes.out 1479412800 1.3E3 host=web01 interface=eth0",
		"rollup sum m 1479412800 1 a=b",
		"rollup 1d-max:sum m 1479412800.500 1 a=b",
		"rollup  m 1 1 a=b",
		"rollup 1h-sum m 1 1",
	} {
		f.Add(s)
	}
	p := newParser(f, &Options{MaxTags: 4})
	f.Fuzz(func(t *testing.T, line string) {
		var pt parse.Point
		spec, ts, err := p.ParseRollup([]byte(line), &pt)
		if err != nil {
			var pe *PutError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %T %v", line, err, err)
			}
			if !strings.HasPrefix(RollupCommandError(err), "rollup: ") {
				t.Fatalf("%q: reply %q", line, RollupCommandError(err))
			}
			return
		}
		if len(spec) == 0 || ts <= 0 || (pt.Value.T != ts && pt.Value.T != ts*1000) {
			t.Fatalf("%q: spec %q ts %d point %v", line, spec, ts, pt.Value)
		}
	})
}
