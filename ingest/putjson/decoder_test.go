package putjson

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func newDecoder(t testing.TB, opts *Options) *Decoder {
	d, err := NewDecoder(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// items decodes body: a point as its String, a bad one as ERR msg | raw.
func items(d *Decoder, body string) []string {
	d.Reset([]byte(body))
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

func check(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTelegrafAndTcollectorBodies(t *testing.T) {
	d := newDecoder(t, nil)
	telegraf := `[{"metric":"cpu_usage_idle","timestamp":1763801234,"value":97.48743718592965,"tags":{"cpu":"cpu-total","host":"myhost"}}
,{"metric":"big","timestamp":1763801234,"value":1e+21,"tags":{"host":"myhost"}}
,{"metric":"small","timestamp":1763801234,"value":5e-07,"tags":{"host":"myhost"}}
]`
	check(t, items(d, telegraf), []string{
		"cpu_usage_idle{cpu=cpu-total,host=myhost} 1763801234000 97.48743718592965f64",
		"big{host=myhost} 1763801234000 1e+21f64",
		"small{host=myhost} 1763801234000 5e-07f64",
	})
	check(t, items(d, `{"metric":"sys.cpu","timestamp":1356998400500,"value":"42","tags":{"host":"web01"}}`),
		[]string{"sys.cpu{host=web01} 1356998400500 42i"})
	check(t, items(d, ` [ { "tags" : { "a" : "b" } , "value" : 42.5 , "timestamp" : "1356998400" , "metric" : "m" } ] `),
		[]string{"m{a=b} 1356998400000 42.5f32"})
	if st := d.Stats(); st != (Stats{Points: 1}) {
		t.Fatalf("stats %+v", st)
	}
}

func TestJacksonLikeReadings(t *testing.T) {
	d := newDecoder(t, nil)
	for _, tc := range []struct{ body, want string }{
		{`{"metric":7.0,"timestamp":1,"value":1}`, "7.0{} 1000 1i"},
		{`{"metric":"m","timestamp":1234567.7,"value":1}`, "m{} 1234567000 1i"},
		{`{"metric":"m","timestamp":1.7e9,"value":1}`, "m{} 1700000000000 1i"},
		{`{"metric":"m","timestamp":1,"value":1,"tags":null}`, "m{} 1000 1i"},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{}}`, "m{} 1000 1i"},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"a":"1","a":"2"}}`, "m{a=2} 1000 1i"},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"n":7,"b":true}}`, "m{n=7,b=true} 1000 1i"},
		{`{"metric":"x","metric":"m","timestamp":1,"value":1,"tsuid":"000001","other":{"a":[1,{"b":null}]}}`, "m{} 1000 1i"},
		{`{"metric":"s\u00e9\/x","timestamp":1,"value":1,"tags":{"k\u00e9":"\u4e2d\ud840\udc00"}}`, `sé/x{ké=中𠀀} 1000 1i`},
		{`{"met\u0072ic":"m","timestamp":1,"value":-0}`, "m{} 1000 0i"},
	} {
		got := items(d, tc.body)
		if len(got) != 1 || (got[0] != tc.want && !strings.HasPrefix(tc.want, "ERR")) {
			t.Errorf("%s: got %v, want %s", tc.body, got, tc.want)
		}
	}
}

func TestPointErrors(t *testing.T) {
	d := newDecoder(t, &Options{MaxTags: 2})
	for _, tc := range []struct{ elem, want string }{
		{`{"timestamp":123456,"value":6.7,"tags":{"test":"test"}}`, "Metric name was empty"},
		{`{"metric":null,"timestamp":1,"value":1}`, "Metric name was empty"},
		{`{"metric":"","timestamp":1,"value":1}`, "Metric name was empty"},
		{`{"metric":"test","value":6.7,"tags":{"test":"test"}}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":0,"value":6.7}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":-5,"value":6.7}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":"test","value":6.7}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":1e300,"value":6.7}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":true,"value":6.7}`, "Invalid timestamp"},
		{`{"metric":"test","timestamp":1}`, "Empty value"},
		{`{"metric":"test","timestamp":1,"value":null}`, "Empty value"},
		{`{"metric":"test","timestamp":1,"value":""}`, "Empty value"},
		{`{"metric":"test","timestamp":123456,"value":"test","tags":{"test":"test"}}`, "Unable to parse value to a number"},
		{`{"metric":"test","timestamp":1,"value":true}`, "Unable to parse value to a number"},
		{`{"metric":"test","timestamp":1,"value":"1.2.3"}`, "Unable to parse value to a number"},
		{`{"metric":"m","timestamp":1,"value":1e999}`, "value is NaN or Infinite: Infinity for metric=m timestamp=1"},
		{`{"metric":"m","timestamp":10000000000000,"value":42,"tags":{"a":"b"}}`, "bad timestamp=10000000000000 when trying to add value=[42]/0 to metric=m, tags={a=b}"},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"a":"1","b":"2","c":"3"}}`, "Too many tags: 3 maximum allowed: 2, tags: {a=1, b=2, c=3}"},
		{`{"metric":"Abin76+-","timestamp":123456,"value":6.7,"tags":{"test":"test"}}`, `Invalid metric name ("Abin76+-"): illegal character: +`},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"h st":"x"}}`, `Invalid tag name ("h st"): illegal character: U+0020`},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"a":""}}`, `Invalid tag value: empty string`},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"a":null}}`, `Invalid tag value: null`},
		{`{"metric":{"test":"test"},"timestamp":1,"value":1}`, `Invalid type for "metric": expected a string or a number`},
		{`{"metric":"m","timestamp":1,"value":[1]}`, `Invalid type for "value": expected a string or a number`},
		{`{"metric":"m","timestamp":1,"value":1,"tags":["test1","test2"]}`, `Invalid type for "tags": expected an object`},
		{`{"metric":"m","timestamp":1,"value":1,"tags":{"a":{"b":"c"}}}`, `Invalid type for tag "a": expected a string`},
		{`42`, "Invalid datapoint: expected a JSON object"},
		{`null`, "Invalid datapoint: expected a JSON object"},
	} {
		got := items(d, "[\n"+tc.elem+"\n,"+`{"metric":"ok","timestamp":1,"value":1}`+"]")
		check(t, got, []string{"ERR " + tc.want + " | " + tc.elem, "ok{} 1000 1i"})
		if st := d.Stats(); st != (Stats{Points: 1, BadPoints: 1}) {
			t.Fatalf("%s: stats %+v", tc.elem, st)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	d := newDecoder(t, nil)
	good := `{"metric":"m","timestamp":1,"value":1}`
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"", []string{"FATAL Missing request content at byte 0"}},
		{"  \n", []string{"FATAL Missing request content at byte 3"}},
		{"blah", []string{"FATAL The JSON must start as an object or an array at byte 0"}},
		{"[]", nil},
		{" [ ] ", nil},
		{"[] x", []string{"FATAL unexpected data after the JSON value at byte 3"}},
		{good + " x", []string{"FATAL unexpected data after the JSON value at byte 39"}},
		{"[" + good + "," + good, []string{"m{} 1000 1i", "m{} 1000 1i", "FATAL unexpected end of JSON: expected ',' or ']' after an array element at byte 78"}},
		{"[" + good + " " + good + "]", []string{"m{} 1000 1i", "FATAL expected ',' or ']' after an array element at byte 40"}},
		{`[{"metric":"m" "timestamp":1}]`, []string{"FATAL expected ',' or '}' in object at byte 15"}},
		{`[{"metric" "m"}]`, []string{"FATAL expected ':' after an object key at byte 11"}},
		{`[{metric:"m"}]`, []string{"FATAL expected a string key in object at byte 2"}},
		{`[{"metric":"m\x"}]`, []string{"FATAL invalid escape in string at byte 13"}},
		{`[{"metric":"m\u12"}]`, []string{"FATAL invalid \\u escape in string at byte 13"}},
		{"[{\"metric\":\"a\nb\"}]", []string{"FATAL control character in string at byte 13"}},
		{`[{"metric":"m`, []string{"FATAL unexpected end of JSON: unterminated string at byte 13"}},
		{`[{"value":01}]`, []string{"FATAL expected ',' or '}' in object at byte 11"}},
		{`[{"value":1.}]`, []string{"FATAL invalid number at byte 12"}},
		{`[{"value":-}]`, []string{"FATAL invalid number at byte 11"}},
		{`[{"value":tru}]`, []string{"FATAL invalid literal at byte 10"}},
		{`[{"x":[1,2}]`, []string{"FATAL expected ',' or ']' in array at byte 10"}},
		{`[{"x":{"a":1]}]`, []string{"FATAL expected ',' or '}' in object at byte 12"}},
		{`[{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]`, []string{"FATAL JSON nested too deep at byte 70"}},
	} {
		check(t, items(d, tc.body), tc.want)
		var se *SyntaxError
		if len(tc.want) > 0 && strings.HasPrefix(tc.want[len(tc.want)-1], "FATAL") && !errors.As(d.Err(), &se) {
			t.Fatalf("%q: %T", tc.body, d.Err())
		}
	}
}

func TestHostileNestingStaysFlat(t *testing.T) {
	d := newDecoder(t, nil)
	body := `[{"x":` + strings.Repeat("[", 10_000_000)
	got := items(d, body)
	if len(got) != 1 || got[0] != "FATAL JSON nested too deep at byte 70" {
		t.Fatalf("got %v", got)
	}
	var tags strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&tags, `"k%d":"v",`, i)
	}
	got = items(d, `{"metric":"m","timestamp":1,"value":1,"tags":{`+tags.String()+`"z":"v"}}`)
	// The count is exact; the message lists MaxListedTags of them, in the
	// order of OpenTSDB's HashMap.
	if len(got) != 1 || !strings.HasPrefix(got[0], "ERR Too many tags: 50001 maximum allowed: 32, tags: {k705=v, k947=v, ") ||
		strings.Count(got[0], "=v") != MaxListedTags {
		t.Fatalf("got %.200v", got)
	}
}

func TestOptions(t *testing.T) {
	if _, err := NewDecoder(&Options{MaxTags: -1}); err == nil {
		t.Fatal("negative max tags accepted")
	}
	d := newDecoder(t, &Options{AllowSpecialChars: "+"})
	check(t, items(d, `{"metric":"a+b","timestamp":1,"value":1}`), []string{"a+b{} 1000 1i"})
}
