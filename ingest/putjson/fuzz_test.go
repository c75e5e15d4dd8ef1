package putjson

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/uid"
)

// FuzzDecode: arbitrary bodies never panic; whatever is yielded as a good
// point has valid names and a positive time; Raw, and AppendEcho of a
// refused point, are always valid JSON (encoding/json agrees) for elements
// read before any syntax error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`[{"metric":"cpu_usage_idle","timestamp":1763801234,"value":97.48743718592965,"tags":{"cpu":"cpu-total","host":"myhost"}}` + "\n]",
		`{"metric":"s\u00e9","timestamp":"1","value":"1e3","tags":{"a":"b","a":null},"x":[1,{"y":null}]}`,
		`[42,{"metric":{"a":1}},{"metric":"m","timestamp":1e999,"value":-0}`,
		`[{"x":[[[[[[[[[[]]]]]]]]]]}] x`,
		`[{"metric":"m","timestamp":1479412800,"value":1,"tags":{"a":"b"},"interval":"1h","aggregator":"sum","groupByAggregator":null},{"groupByAggregator":{"a":1},"interval":2}]`,
	} {
		f.Add(s)
	}
	v := uid.NewValidator(uid.RulesOpenTSDB, "")
	f.Fuzz(func(t *testing.T, body string) {
		d := newDecoder(t, &Options{MaxTags: 4})
		d.Reset([]byte(body))
		for d.Next() {
			if !json.Valid(d.Raw()) {
				t.Fatalf("raw %q is not JSON", d.Raw())
			}
			if d.PointError() != nil {
				if echo := d.AppendEcho(nil); !json.Valid(echo) {
					t.Fatalf("echo %q of %q is not JSON", echo, d.Raw())
				}
				continue
			}
			p := d.Point()
			if v.Validate(uid.Metric, p.Metric) != nil || p.Value.T <= 0 || len(p.Tags) > 4 {
				t.Fatalf("bad point yielded: %s", p)
			}
		}
		if d.Err() == nil && !json.Valid([]byte(body)) {
			t.Fatalf("%q accepted but is not JSON", body)
		}
	})
}

// FuzzRoundTrip marshals a point with encoding/json (escaping whatever it
// likes) and checks the decoder reads it back.
func FuzzRoundTrip(f *testing.F) {
	f.Add("sys.cpu", "host", "web01", int64(1356998400), 42.5, "")
	f.Add("Ünï/cödé", "中文", "值", int64(1356998400500), -1e21, "42")
	f.Add("a-b_c.d", "k", "v", int64(1), 5e-07, "9223372036854775807")
	v := uid.NewValidator(uid.RulesOpenTSDB, "")
	f.Fuzz(func(t *testing.T, metric, k, val string, ts int64, fv float64, sv string) {
		if v.ValidateString(uid.Metric, metric) != nil || v.ValidateString(uid.TagK, k) != nil ||
			v.ValidateString(uid.TagV, val) != nil || ts <= 0 || ts > 9999999999999 || math.IsNaN(fv) || math.IsInf(fv, 0) {
			return
		}
		var value any = fv
		if sv != "" {
			value = sv
		}
		body, err := json.Marshal([]map[string]any{{"metric": metric, "timestamp": ts, "value": value, "tags": map[string]string{k: val}}})
		if err != nil {
			t.Fatal(err)
		}
		d := newDecoder(t, nil)
		d.Reset(body)
		if !d.Next() {
			t.Fatalf("%s: %v", body, d.Err())
		}
		raw, _ := json.Marshal(value)
		if pe := d.PointError(); pe != nil {
			if sv == "" || !strings.Contains(pe.Msg, "number") && !strings.Contains(pe.Msg, "Empty") && !strings.Contains(pe.Msg, "NaN") {
				t.Fatalf("%s: %v", body, pe)
			}
			return
		}
		p := d.Point()
		wantT := ts * 1000
		if uint64(ts)>>32 != 0 {
			wantT = ts
		}
		if string(p.Metric) != metric || len(p.Tags) != 1 || string(p.Tags[0].Key) != k || string(p.Tags[0].Value) != val || p.Value.T != wantT {
			t.Fatalf("%s: got %s", body, p)
		}
		if sv == "" && p.Value.Float() != fv {
			t.Fatalf("%s: value %v, want %v (%s)", body, p.Value.Float(), fv, raw)
		}
		if d.Next() || d.Err() != nil {
			t.Fatal(fmt.Sprint("extra item ", d.Err()))
		}
	})
}
