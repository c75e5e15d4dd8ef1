package putjson

import (
	"strings"
	"testing"
)

// echoes decodes body and returns AppendEcho of every refused point.
func echoes(d *Decoder, body string) []string {
	d.Reset([]byte(body))
	var out []string
	for d.Next() {
		if d.PointError() != nil {
			out = append(out, string(d.AppendEcho(nil)))
		}
	}
	return out
}

// TestAppendEcho pins the datapoint of /api/put?details to OpenTSDB 2.4's
// serialization of its IncomingDataPoint (Jackson, @JsonInclude NON_NULL,
// properties in field order metric, timestamp, value, tags): the value is
// always a string, the timestamp the long Jackson read (0 when absent), an
// absent metric or tags left out, tags in the order of the HashMap Jackson
// filled (Java 8: bucket of the spread String.hashCode, then insertion).
// The field values match real 2.4.0 answers (a missing metric, a missing
// timestamp, a non-numeric value); the tag orders are java.util.HashMap's.
func TestAppendEcho(t *testing.T) {
	d := newDecoder(t, nil)
	var thirteen, thirteenWant []string
	for i := range 13 {
		thirteen = append(thirteen, `"k`+string(rune('a'+i))+`":"v"`)
	}
	for _, k := range []string{"kk", "kl", "km", "ka", "kb", "kc", "kd", "ke", "kf", "kg", "kh", "ki", "kj"} {
		thirteenWant = append(thirteenWant, `"`+k+`":"v"`)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"timestamp":123456,"value":6.7,"tags":{"test":"test"}}`,
			`{"timestamp":123456,"value":"6.7","tags":{"test":"test"}}`},
		{`{"metric":"test","value":6.7,"tags":{"test":"test"}}`,
			`{"metric":"test","timestamp":0,"value":"6.7","tags":{"test":"test"}}`},
		{`{"tags":{"test":"test"},"value":"test","timestamp":"123456","metric":"test"}`,
			`{"metric":"test","timestamp":123456,"value":"test","tags":{"test":"test"}}`},
		{` { "metric" : 7.0 , "timestamp" : 1.5 , "value" : true , "extra" : [1] } `,
			`{"metric":"7.0","timestamp":1,"value":"true"}`},
		{`{"metric":"m","timestamp":1356998400,"value":"a\"b\\c\u00e9","tags":{"host":"a","dc":"b","rack":"c"}}`,
			`{"metric":"m","timestamp":1356998400,"value":"a\"b\\cé","tags":{"rack":"c","host":"a","dc":"b"}}`},
		{`{"metric":"m","timestamp":1356998400,"value":"x","tags":{"web":"1","cpu":"2","type":"3","host":"4","dc":"5","env":"6","app":"7","web":"8"}}`,
			`{"metric":"m","timestamp":1356998400,"value":"x","tags":{"app":"7","web":"8","host":"4","cpu":"2","type":"3","env":"6","dc":"5"}}`},
		{`{"metric":"m","timestamp":1356998400,"value":"x","tags":{` + strings.Join(thirteen, ",") + `}}`,
			`{"metric":"m","timestamp":1356998400,"value":"x","tags":{` + strings.Join(thirteenWant, ",") + `}}`},
		{`{"metric":"m!","timestamp":1356998400,"value":1,"tags":{}}`,
			`{"metric":"m!","timestamp":1356998400,"value":"1","tags":{}}`},
		// Shapes OpenTSDB refuses for the whole body (tsd refuses only the
		// point) are echoed as sent.
		{`{"metric":{"a":1},"timestamp":1,"value":1}`, `{"metric":{"a":1},"timestamp":1,"value":1}`},
		{`{"metric":"m","timestamp":"x","value":1}`, `{"metric":"m","timestamp":"x","value":1}`},
	} {
		got := echoes(d, tc.body)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
}
