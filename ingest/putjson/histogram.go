package putjson

import (
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
)

// SetHistogram switches the Decoder to /api/histogram bodies until the
// next Reset or ResetReader: data points are OpenTSDB's HistogramPojo,
//
//	{"metric": "m", "timestamp": 1356998400, "tags": {"host": "a"},
//	 "id": 0, "value": "<base64 codec bytes, no id>"}
//	{"metric": "m", "timestamp": 1356998400, "tags": {"host": "a"},
//	 "buckets": {"0,1": 5, "1,5": 2}, "underflow": 0, "overflow": 1}
//
// checked in HistogramPojo.validate's order ("Metric name was empty",
// "Invalid timestamp", "Histogram buckets cannot be null or empty if
// 'value' is empty.", "Invalid type. Must be from 0 to 255."), then the
// timestamp's range, the tag limit and the name rules as for a put. The
// value is not read as a number; HistogramFields returns the rest.
func (d *Decoder) SetHistogram(on bool) { d.histo = on }

// HistogramFields are a histogram data point's own fields as sent: the
// codec id (0 when absent), the base64 value (empty when absent), the
// buckets object's JSON text (nil when absent or null), underflow and
// overflow.
type HistogramFields struct {
	ID                  int64
	Value               []byte
	Buckets             []byte
	Underflow, Overflow int64
}

// HistogramFields returns the current point's histogram fields; valid
// until Next. Meaningful only for a point without a PointError.
func (d *Decoder) HistogramFields() HistogramFields {
	e := &d.elem
	f := HistogramFields{Buckets: e.buckets}
	if e.valueKind != kindNull {
		f.Value = e.value
	}
	f.ID, _ = jsonLong(e.id, e.idKind)
	f.Underflow, _ = jsonLong(e.underflow, e.underKind)
	f.Overflow, _ = jsonLong(e.overflow, e.overKind)
	return f
}

// histField reads id, underflow, overflow (scalars) or buckets (an
// object, kept as its JSON text).
func (d *Decoder) histField(key []byte) bool {
	e := &d.elem
	var ok bool
	switch string(key) {
	case "id":
		e.id, e.idKind, ok = d.scalar()
		d.longShape(e.id, e.idKind, `"id"`)
	case "underflow":
		e.underflow, e.underKind, ok = d.scalar()
		d.longShape(e.underflow, e.underKind, `"underflow"`)
	case "overflow":
		e.overflow, e.overKind, ok = d.scalar()
		d.longShape(e.overflow, e.overKind, `"overflow"`)
	case "buckets":
		e.buckets, e.bucketsKind = nil, kindNull
		if d.peek() != '{' {
			var kind int
			_, kind, ok = d.scalar()
			if kind != kindNull {
				d.typeError(`Invalid type for "buckets": expected an object`)
			}
			return ok
		}
		start := d.pos
		if ok = d.skipValue(); ok {
			e.buckets, e.bucketsKind = d.body[start:d.pos], kindComposite
		}
	}
	return ok
}

// longShape notes a field that is not a Java long as Jackson reads one.
func (d *Decoder) longShape(text []byte, kind int, name string) {
	if _, ok := jsonLong(text, kind); !ok {
		d.typeError("Invalid type for " + name + ": expected an integer")
	}
}

// jsonLong reads a long field as Jackson does: an integer, a number with
// a fraction (truncated), or a string holding an integer; absent or
// null is 0.
func jsonLong(text []byte, kind int) (int64, bool) {
	switch kind {
	case kindNone, kindNull:
		return 0, true
	case kindBool, kindComposite:
		return 0, false
	case kindString:
		n, err := strconv.ParseInt(string(text), 10, 64)
		return n, err == nil
	}
	return timestamp(text, kind)
}

// validateHistogram is HistogramPojo.validate, then the checks a put
// gets after it.
func (d *Decoder) validateHistogram() string {
	e := &d.elem
	if len(e.metric) == 0 || e.metricKind == kindNull {
		return msgEmptyMetric
	}
	ts, ok := timestamp(e.ts, e.tsKind)
	if !ok || ts <= 0 {
		return msgBadTimestamp
	}
	if len(e.value) == 0 || e.valueKind == kindNull {
		if len(e.buckets) <= 2 || isEmptyObject(e.buckets) {
			return "Histogram buckets cannot be null or empty if 'value' is empty."
		}
	} else if id, _ := jsonLong(e.id, e.idKind); id < 0 || id > 255 {
		return "Invalid type. Must be from 0 to 255."
	}
	d.pt.Metric = e.metric
	ms, ok := parse.OpenTSDBMillis(ts)
	if !ok {
		return "bad timestamp=" + strconv.FormatInt(ts, 10) + " when trying to add a histogram to metric=" +
			string(e.metric) + ", tags=" + d.formatTags()
	}
	d.pt.Value.T, d.pt.Value.Ms = ms, parse.IsOpenTSDBMillis(ts) && ms%1000 == 0
	if n := len(d.pt.Tags) + e.extraTags; n > d.opts.MaxTags {
		return "Too many tags: " + strconv.Itoa(n) + " maximum allowed: " + strconv.Itoa(d.opts.MaxTags) +
			", tags: " + d.formatTags()
	}
	return d.checkNames()
}

// isEmptyObject reports a JSON object with no member ("{ }").
func isEmptyObject(b []byte) bool {
	for _, c := range b[1 : len(b)-1] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
