package influx

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/tsd-db/tsd/uid"
)

var fuzzSeeds = []string{
	"cpu,host=a,region=eu usage_idle=97.5,usage_user=2i,ok=true 1700000000000000000\n",
	"we\\ ird\\,m,ta\\=g\\ k=va\\,l\\ ue fi\\=eld\\ k=1 1\n# c\n\ncpu s=\"a\nb\",v=2 1\r\n",
	"cpu,host=a usage=\ncpu v=18446744073709551615u,w=-3i,x=.5,y=1e-3 -1\ncpu s=\"open\ncpu v=1",
	"中文,标签=值 字段=1 2\nm b=t,c=FALSE\nm v=1 12 x\n",
}

// FuzzDecode: arbitrary bodies never panic, streaming and in-memory
// decoding agree (decodeAll), every yielded name obeys the lossless rules,
// and the counts add up.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(0))
	}
	v := uid.NewValidator(uid.RulesLossless, "")
	f.Fuzz(func(t *testing.T, body string, precIdx uint8) {
		precs := []Precision{Nanosecond, Microsecond, Millisecond, Second, Minute, Hour}
		prec := precs[int(precIdx)%len(precs)]
		got, st := decodeAll(t, &Options{MaxLineBytes: 256, MaxTags: 4}, body, prec, 1700000000000)
		bad := 0
		for _, g := range got {
			if strings.HasPrefix(g, "ERR ") {
				bad++
			}
		}
		if int64(bad) != st.BadLines || int64(len(got)-bad) != st.Points {
			t.Fatalf("stats %+v for %d items, %d bad", st, len(got), bad)
		}
		d, _ := NewDecoder(&Options{MaxLineBytes: 256, MaxTags: 4})
		d.Reset([]byte(body), prec, 1700000000000)
		for d.Next() {
			if d.LineError() != nil {
				continue
			}
			p := d.Point()
			if err := v.Validate(uid.Metric, p.Metric); err != nil {
				t.Fatalf("metric %q yielded: %v", p.Metric, err)
			}
			for _, tag := range p.Tags {
				if v.Validate(uid.TagK, tag.Key) != nil || v.Validate(uid.TagV, tag.Value) != nil {
					t.Fatalf("tag %q=%q yielded", tag.Key, tag.Value)
				}
			}
			if p.Value.T < 0 {
				t.Fatalf("negative time %d", p.Value.T)
			}
		}
	})
}

// FuzzRoundTrip writes a point with line-protocol/v2's encoder (which
// escapes names) and checks the decoder reads back the same names, values
// and time.
func FuzzRoundTrip(f *testing.F) {
	f.Add("cpu", "host", "a b", "usage", int64(42), 97.5, int64(1700000000123456789))
	f.Add("we ird,m", "ta=g k", "va,l\\ue", "fi=eld\\", int64(-1), -0.0, int64(0))
	f.Add("中文", "标签", "值", "字段", int64(math.MinInt64), 1e300, int64(math.MaxInt64))
	v := uid.NewValidator(uid.RulesLossless, "")
	f.Fuzz(func(t *testing.T, meas, tagk, tagv, fieldk string, iv int64, fv float64, ts int64) {
		for _, n := range []string{meas, tagk, tagv, fieldk} {
			if v.ValidateString(uid.Metric, n) != nil || !utf8.ValidString(n) {
				return
			}
		}
		// A line starting with # is a comment, whatever an encoder says.
		if math.IsNaN(fv) || math.IsInf(fv, 0) || ts < 0 || strings.HasPrefix(meas, "#") {
			return
		}
		var enc lineprotocol.Encoder
		enc.SetPrecision(lineprotocol.Nanosecond)
		enc.StartLine(meas)
		enc.AddTag(tagk, tagv)
		enc.AddField(fieldk, lineprotocol.IntValue(iv))
		fval, _ := lineprotocol.FloatValue(fv)
		enc.AddField(fieldk+"2", fval)
		enc.AddField("s", lineprotocol.MustNewValue("str\"ing\n"))
		enc.EndLine(time.Unix(0, ts))
		if enc.Err() != nil {
			return
		}
		body := enc.Bytes()
		d, _ := NewDecoder(nil)
		d.Reset(body, Nanosecond, 0)
		var got []string
		for d.Next() {
			if le := d.LineError(); le != nil {
				t.Fatalf("%q: %v", body, le)
			}
			p := d.Point()
			got = append(got, fmt.Sprintf("%s|%s=%s|%d|%d|%d", p.Metric, p.Tags[0].Key, p.Tags[0].Value, p.Value.T, p.Value.Kind, p.Value.Bits))
		}
		want := []string{
			fmt.Sprintf("%s_%s|%s=%s|%d|0|%d", meas, fieldk, tagk, tagv, ts/1e6, uint64(iv)),
			fmt.Sprintf("%s_%s2|%s=%s|%d|2|%d", meas, fieldk, tagk, tagv, ts/1e6, math.Float64bits(fv)),
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n got %q\nwant %q", body, got, want)
		}
		if d.Stats().StringFields != 1 {
			t.Fatalf("string fields %d", d.Stats().StringFields)
		}
	})
}
