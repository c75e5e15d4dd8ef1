package putjson

import (
	"math"
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/uid"
)

// point validates the current element in OpenTSDB's order and fills d.pt
// or d.perr.
func (d *Decoder) point() {
	if msg := d.validate(); msg != "" {
		d.perr = PointError{Msg: msg}
		d.bad = true
		d.stats.BadPoints++
		return
	}
	d.stats.Points++
}

func (d *Decoder) validate() string {
	e := &d.elem
	if e.typeErr != "" {
		return e.typeErr
	}
	if d.histo {
		return d.validateHistogram()
	}
	if len(e.metric) == 0 || e.metricKind == kindNull {
		return msgEmptyMetric
	}
	ts, ok := timestamp(e.ts, e.tsKind)
	if !ok || ts <= 0 {
		return msgBadTimestamp
	}
	if len(e.value) == 0 || e.valueKind == kindNull {
		return msgEmptyValue
	}
	d.pt.Metric = e.metric
	v, err := parse.ParseOpenTSDBValue(e.value)
	if _, nf := err.(*parse.NumberFormatError); nf {
		return msgNotANumber
	}
	if err != nil {
		return "value is NaN or Infinite: " + parse.JavaDouble(v.Float()) + " for metric=" + string(e.metric) +
			" timestamp=" + strconv.FormatInt(ts, 10)
	}
	ms, ok := parse.OpenTSDBMillis(ts)
	if !ok {
		return "bad timestamp=" + strconv.FormatInt(ts, 10) + " when trying to add value=" +
			string(parse.AppendJavaValue(nil, v)) + " to metric=" + string(e.metric) + ", tags=" + d.formatTags()
	}
	v.T, v.Ms = ms, parse.IsOpenTSDBMillis(ts) && ms%1000 == 0
	d.pt.Value = v
	if n := len(d.pt.Tags) + e.extraTags; n > d.opts.MaxTags {
		return "Too many tags: " + strconv.Itoa(n) + " maximum allowed: " + strconv.Itoa(d.opts.MaxTags) +
			", tags: " + d.formatTags()
	}
	return d.checkNames()
}

// timestamp reads a timestamp field: an integer, a number with a fraction
// (truncated) or a string holding either; absent or null is 0.
func timestamp(text []byte, kind int) (int64, bool) {
	switch kind {
	case kindNone, kindNull:
		return 0, true
	case kindBool:
		return 0, false
	}
	if v, ok := parse.ParseInt(text); ok {
		return v, true
	}
	f, ok := parse.ParseFloat(text)
	if !ok || math.IsNaN(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

func (d *Decoder) checkNames() string {
	if err := d.names.Check(uid.Metric, d.pt.Metric); err != nil {
		return err.Error()
	}
	for _, t := range d.pt.Tags {
		if err := d.names.Check(uid.TagK, t.Key); err != nil {
			return err.Error()
		}
		if err := d.names.Check(uid.TagV, t.Value); err != nil {
			return err.Error()
		}
	}
	if d.elem.nullTag {
		return "Invalid tag value: null"
	}
	return ""
}

// formatTags prints the tags as Java prints the HashMap OpenTSDB holds
// them in: {k=v, k2=v2}, in the map's order.
func (d *Decoder) formatTags() string {
	return string(parse.AppendJavaMap(nil, d.pt.Tags, &d.order))
}
