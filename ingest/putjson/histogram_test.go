package putjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/uid"
)

// TestHistogramFields: /api/histogram points in HistogramPojo.validate's
// order and messages, and the fields they carry.
func TestHistogramFields(t *testing.T) {
	body := `[{"metric":"m","timestamp":1356998400,"tags":{"host":"a"},"buckets":{"1,2":5, "2,3" : 6},"underflow":1,"overflow":"2"},
	{"metric":"m","timestamp":1356998400500,"tags":{"host":"a"},"id":3,"value":"AAE/gAAAQAAAAAoAAA=="},
	{"metric":"m","timestamp":1356998400,"tags":{"host":"a"},"buckets":{}},
	{"metric":"m","timestamp":1356998400,"tags":{"host":"a"},"value":null,"buckets":null},
	{"metric":"m","timestamp":1356998400,"tags":{"host":"a"},"value":"AA","id":256},
	{"metric":"m","timestamp":0,"buckets":{"1,2":5}},
	{"metric":"","timestamp":1,"buckets":{"1,2":5}},
	{"metric":"m","timestamp":1,"buckets":[1]},
	{"metric":"m","timestamp":1,"buckets":{"1,2":5},"id":"x"},
	{"metric":"m!","timestamp":1,"buckets":{"1,2":5}}]`
	d := newDecoder(t, nil)
	d.Reset([]byte(body))
	d.SetHistogram(true)
	var got []string
	for d.Next() {
		if pe := d.PointError(); pe != nil {
			got = append(got, "error: "+pe.Msg)
			continue
		}
		f := d.HistogramFields()
		b, _ := json.Marshal(map[string]any{"t": d.Point().Value.T, "ms": d.Point().Value.Ms, "id": f.ID, "value": string(f.Value),
			"buckets": string(f.Buckets), "u": f.Underflow, "o": f.Overflow})
		got = append(got, string(b))
	}
	want := []string{
		`{"buckets":"{\"1,2\":5, \"2,3\" : 6}","id":0,"ms":false,"o":2,"t":1356998400000,"u":1,"value":""}`,
		`{"buckets":"","id":3,"ms":false,"o":0,"t":1356998400500,"u":0,"value":"AAE/gAAAQAAAAAoAAA=="}`,
		"error: Histogram buckets cannot be null or empty if 'value' is empty.",
		"error: Histogram buckets cannot be null or empty if 'value' is empty.",
		"error: Invalid type. Must be from 0 to 255.",
		"error: Invalid timestamp",
		"error: Metric name was empty",
		`error: Invalid type for "buckets": expected an object`,
		`error: Invalid type for "id": expected an integer`,
		`error: Invalid metric name ("m!"): illegal character: !`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || d.Err() != nil {
		t.Fatalf("got\n%s\nwant\n%s\n(err %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), d.Err())
	}
	// The mode ends with the body: the next Reset reads puts again.
	d.Reset([]byte(`{"metric":"m","timestamp":1,"value":"AA"}`))
	if !d.Next() || d.PointError() == nil || d.PointError().Msg != "Unable to parse value to a number" {
		t.Fatalf("put after histograms: %v", d.PointError())
	}
}

// FuzzHistogramDecode: any body in histogram mode never panics; a good
// point has a valid metric, a positive time and, without a value,
// buckets that are a JSON object.
func FuzzHistogramDecode(f *testing.F) {
	for _, s := range []string{
		`[{"metric":"m","timestamp":1356998400,"tags":{"host":"a"},"buckets":{"1,2":5},"underflow":1,"overflow":2}]`,
		`{"metric":"m","timestamp":1,"id":255,"value":"AAE/gAAAQAAAAAoAAA=="}`,
		`[{"buckets":{"a":{"b":[1,2,{}]}},"metric":"m","timestamp":"5"},{"id":1e3,"value":null}]`,
	} {
		f.Add(s)
	}
	v := uid.NewValidator(uid.RulesOpenTSDB, "")
	f.Fuzz(func(t *testing.T, body string) {
		d := newDecoder(t, &Options{MaxTags: 4})
		d.Reset([]byte(body))
		d.SetHistogram(true)
		for d.Next() {
			if d.PointError() != nil {
				if echo := d.AppendEcho(nil); !json.Valid(echo) {
					t.Fatalf("echo %q of %q is not JSON", echo, d.Raw())
				}
				continue
			}
			p, hf := d.Point(), d.HistogramFields()
			if v.Validate(uid.Metric, p.Metric) != nil || p.Value.T <= 0 || len(p.Tags) > 4 {
				t.Fatalf("bad point yielded: %s", p)
			}
			if len(hf.Value) == 0 && !json.Valid(hf.Buckets) {
				t.Fatalf("buckets %q of %q", hf.Buckets, d.Raw())
			}
			if len(hf.Value) > 0 && (hf.ID < 0 || hf.ID > 255) {
				t.Fatalf("id %d yielded", hf.ID)
			}
		}
	})
}
