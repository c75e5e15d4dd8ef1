package promapi

import (
	"context"
	"math"
	"strconv"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/jsonw"
)

// appendSuccess appends {"status":"success","data":<data>[,"warnings":..]
// [,"infos":..]}; data is appended by the callback.
func appendSuccess(dst []byte, warnings, infos []string, data func([]byte) []byte) []byte {
	dst = append(dst, `{"status":"success","data":`...)
	dst = data(dst)
	dst = appendNotices(dst, warnings, infos)
	return append(dst, '}')
}

// appendNotices appends the optional warnings and infos arrays.
func appendNotices(dst []byte, warnings, infos []string) []byte {
	if len(warnings) > 0 {
		dst = append(dst, `,"warnings":`...)
		dst = jsonw.HTML.AppendStrings(dst, warnings)
	}
	if len(infos) > 0 {
		dst = append(dst, `,"infos":`...)
		dst = jsonw.HTML.AppendStrings(dst, infos)
	}
	return dst
}

// appendErrorJSON appends Prometheus's error body.
func appendErrorJSON(dst []byte, e *apiError) []byte {
	dst = append(dst, `{"status":"error","errorType":`...)
	dst = jsonw.HTML.AppendString(dst, e.typ.name)
	dst = append(dst, `,"error":`...)
	dst = jsonw.HTML.AppendString(dst, e.err.Error())
	return append(dst, '}')
}

// appendQueryData appends {"resultType":T,"result":R[,"stats":S]} for an
// engine result; stats is the encoded statistics, nil for none.
func appendQueryData(dst []byte, v promql.Result, stats []byte) []byte {
	dst = append(dst, `{"resultType":`...)
	dst = jsonw.HTML.AppendString(dst, string(v.Value.Type()))
	dst = append(dst, `,"result":`...)
	dst = appendValue(dst, v)
	if stats != nil {
		dst = append(dst, `,"stats":`...)
		dst = append(dst, stats...)
	}
	return append(dst, '}')
}

// resultSource is appendSuccess around appendQueryData written in parts
// (an api/answer Source): a vector's samples and a matrix's samples are
// its elements, so a part overshoots its size by one sample at most,
// whatever a series holds (an instant query's range vector is bounded by
// MaxSamples alone).
type resultSource struct {
	v               promql.Result
	stats           []byte
	warnings, infos []string
	done            func() // closes the query, once the answer is written
	i               int    // the next element; -1 before the head
	sc              seriesCursor
}

// seriesCursor is how far a matrix's series is written.
type seriesCursor struct {
	phase uint8 // seriesHead, seriesFloats, seriesHistograms, seriesEnd
	open  bool  // the phase's array is opened (its comma written at seriesHead)
	j     int   // the phase's next sample

	stamps jsonw.Stamps // the series' sample times
}

const (
	seriesHead = iota
	seriesFloats
	seriesHistograms
	seriesEnd
)

func newResultSource(v promql.Result, stats []byte, warnings, infos []string, done func()) *resultSource {
	return &resultSource{v: v, stats: stats, warnings: warnings, infos: infos, done: done, i: -1}
}

// Next implements answer.Source.
func (r *resultSource) Next(_ context.Context, dst []byte, max int) ([]byte, bool, error) {
	if r.i < 0 {
		dst = append(dst, `{"status":"success","data":{"resultType":`...)
		dst = jsonw.HTML.AppendString(dst, string(r.v.Value.Type()))
		dst = append(dst, `,"result":`...)
		r.i = 0
		if r.elements() < 0 { // a scalar, a string: whole
			return r.appendEnd(appendValue(dst, r.v)), true, nil
		}
		dst = append(dst, '[')
	}
	n := r.elements()
	for r.i < n && len(dst) < max {
		switch v := r.v.Value.(type) {
		case promql.Matrix:
			var done bool
			if dst, done = r.sc.appendSeries(dst, &v[r.i], r.i > 0, max); !done {
				return dst, false, nil
			}
		case promql.Vector:
			if r.i > 0 {
				dst = append(dst, ',')
			}
			dst = appendSample(dst, &v[r.i])
		}
		r.i++
	}
	if r.i < n {
		return dst, false, nil
	}
	return r.appendEnd(append(dst, ']')), true, nil
}

// appendSeries appends s from c on, as appendSeries writes it whole (a
// comma first when comma), until it ends (done, c reset) or dst reaches
// max bytes after a whole sample.
func (c *seriesCursor) appendSeries(dst []byte, s *promql.Series, comma bool, max int) ([]byte, bool) {
	for {
		switch c.phase {
		case seriesHead:
			if comma {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"metric":`...)
			dst = appendLabels(dst, s.Metric)
			c.phase = seriesFloats
		case seriesFloats:
			if len(s.Floats) > 0 && !c.pairs(&dst, `,"values":[`, len(s.Floats), max, func(dst []byte, j int) []byte {
				return appendFloatPair(dst, &c.stamps, s.Floats[j].T, s.Floats[j].F)
			}) {
				return dst, false
			}
			c.phase, c.open, c.j = seriesHistograms, false, 0
		case seriesHistograms:
			if len(s.Histograms) > 0 && !c.pairs(&dst, `,"histograms":[`, len(s.Histograms), max, func(dst []byte, j int) []byte {
				return appendHistogramPair(dst, &c.stamps, s.Histograms[j].T, s.Histograms[j].H)
			}) {
				return dst, false
			}
			*c = seriesCursor{}
			return append(dst, '}'), true
		}
		if len(dst) >= max {
			return dst, false
		}
	}
}

// pairs appends samples from c.j on, opening the array first; true once
// the array is closed.
func (c *seriesCursor) pairs(dst *[]byte, open string, n, max int, pair func([]byte, int) []byte) bool {
	b := *dst
	if !c.open {
		b, c.open = append(b, open...), true
	}
	for ; c.j < n && len(b) < max; c.j++ {
		if c.j > 0 {
			b = append(b, ',')
		}
		b = pair(b, c.j)
	}
	if c.j == n {
		b = append(b, ']')
	}
	*dst = b
	return c.j == n
}

// elements is the number of elements of a matrix or vector, -1 for a
// value written whole.
func (r *resultSource) elements() int {
	switch v := r.v.Value.(type) {
	case promql.Matrix:
		return len(v)
	case promql.Vector:
		return len(v)
	}
	return -1
}

// appendEnd appends what follows the result: the statistics, the end of
// data, the notices.
func (r *resultSource) appendEnd(dst []byte) []byte {
	if r.stats != nil {
		dst = append(append(dst, `,"stats":`...), r.stats...)
	}
	return append(appendNotices(append(dst, '}'), r.warnings, r.infos), '}')
}

// Close implements answer.Source.
func (r *resultSource) Close() {
	if r.done != nil {
		r.done()
		r.done = nil
	}
}

// successList is appendSuccess around a list of n elements, each
// appended by elem, written in parts.
func successList(warnings, infos []string, n int, elem func([]byte, int) []byte) *answer.List {
	return &answer.List{Open: []byte(`{"status":"success","data":[`), N: n, Elem: elem,
		End: append(appendNotices([]byte{']'}, warnings, infos), '}')}
}

// appendValue appends a result's value.
func appendValue(dst []byte, v promql.Result) []byte {
	switch r := v.Value.(type) {
	case promql.Matrix:
		return appendMatrix(dst, r)
	case promql.Vector:
		return appendVector(dst, r)
	case promql.Scalar:
		return appendScalar(dst, r)
	case promql.String:
		return appendStringResult(dst, r)
	}
	return append(dst, "null"...)
}

func appendMatrix(dst []byte, m promql.Matrix) []byte {
	dst = append(dst, '[')
	for i, s := range m {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSeries(dst, s)
	}
	return append(dst, ']')
}

// appendScalar appends a scalar result as promql.Scalar.MarshalJSON
// does, unlike a vector's samples: [<float64(T)/1000 in shortest form>,
// "<value in 'f' form>"], so 4.5 s is 4.5 (not 4.500) and 1e-7 is
// "0.0000001".
func appendScalar(dst []byte, s promql.Scalar) []byte {
	dst = append(dst, '[')
	dst = appendShortSeconds(dst, s.T)
	dst = append(dst, ',', '"')
	dst = jsonw.AppendFixed(dst, s.V)
	return append(dst, '"', ']')
}

// appendStringResult appends a string result as promql.String.MarshalJSON
// does: its own encoding/json call, whose escaping (\b, \f) differs from
// jsoniter's, so it is used as is.
func appendStringResult(dst []byte, s promql.String) []byte {
	b, err := s.MarshalJSON()
	if err != nil { // unreachable: a finite float64 and a string
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// appendShortSeconds appends milliseconds t as encoding/json writes
// float64(t)/1000: shortest form, never an exponent for a whole
// millisecond count.
func appendShortSeconds(dst []byte, t int64) []byte {
	return jsonw.AppendFixed(dst, float64(t)/1000)
}

// appendSeries appends {"metric":{..}} with "values":[..] when it has
// float points and "histograms":[..] when it has native histograms, as
// Prometheus's marshalSeriesJSON does.
func appendSeries(dst []byte, s promql.Series) []byte {
	dst = append(dst, `{"metric":`...)
	dst = appendLabels(dst, s.Metric)
	var st jsonw.Stamps // the series' sample times
	if len(s.Floats) > 0 {
		dst = append(dst, `,"values":[`...)
		for i, p := range s.Floats {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendFloatPair(dst, &st, p.T, p.F)
		}
		dst = append(dst, ']')
	}
	if len(s.Histograms) > 0 {
		dst = append(dst, `,"histograms":[`...)
		for i, p := range s.Histograms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendHistogramPair(dst, &st, p.T, p.H)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendVector(dst []byte, v promql.Vector) []byte {
	dst = append(dst, '[')
	for i := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSample(dst, &v[i])
	}
	return append(dst, ']')
}

// appendSample appends one element of a vector.
func appendSample(dst []byte, s *promql.Sample) []byte {
	dst = append(dst, `{"metric":`...)
	dst = appendLabels(dst, s.Metric)
	var st jsonw.Stamps
	if s.H != nil {
		dst = append(dst, `,"histogram":`...)
		dst = appendHistogramPair(dst, &st, s.T, s.H)
	} else {
		dst = append(dst, `,"value":`...)
		dst = appendFloatPair(dst, &st, s.T, s.F)
	}
	return append(dst, '}')
}

// appendPair appends [<seconds>,<value>], the seconds through st.
func appendPair(dst []byte, st *jsonw.Stamps, t int64, value func([]byte) []byte) []byte {
	dst = append(dst, '[')
	dst = appendTimestamp(dst, st, t)
	dst = append(dst, ',')
	dst = value(dst)
	return append(dst, ']')
}

// appendFloatPair appends [<seconds>,"<value>"], the seconds through st,
// one per series (consecutive samples share their leading digits).
func appendFloatPair(dst []byte, st *jsonw.Stamps, t int64, f float64) []byte {
	dst = append(dst, '[')
	dst = appendTimestamp(dst, st, t)
	dst = append(dst, ',')
	dst = appendFloatString(dst, f)
	return append(dst, ']')
}

func appendHistogramPair(dst []byte, st *jsonw.Stamps, t int64, h *histogram.FloatHistogram) []byte {
	return appendPair(dst, st, t, func(b []byte) []byte { return appendHistogram(b, h) })
}

// appendTimestamp appends milliseconds t as decimal seconds, with the
// fraction only when there is one ("1700000000", "1700000000.250"); st
// writes the seconds (one per series: its times share their leading
// digits).
func appendTimestamp(dst []byte, st *jsonw.Stamps, t int64) []byte {
	if t < 0 {
		dst = append(dst, '-')
		t = -t // MinInt64 stays negative; no query reaches it
	}
	dst = st.Append(dst, t/1000)
	frac := t % 1000
	if frac == 0 {
		return dst
	}
	return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// appendFloatString appends f as a JSON string the way Prometheus's
// jsonutil.MarshalFloat writes sample values: shortest decimal, in 'e'
// form below 1e-6 and from 1e21 up ("1e-07", "1e+21"), else 'f'; "NaN",
// "+Inf", "-Inf".
func appendFloatString(dst []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(dst, `"NaN"`...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		// A whole number below 1e15 (its neighbours at most 1/8 apart)
		// needs every digit to round-trip, so the shortest 'f' form is
		// its integer: written without the float formatter (gauges of
		// counts and percentages, every counter).
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(f), 10)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		// +Inf included: strconv writes "+Inf" in either form.
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	} else {
		dst = jsonw.AppendFixed(dst, f)
	}
	return append(dst, '"')
}

// appendHistogram appends a native histogram in Prometheus's layout:
// count, sum and the non-empty buckets as [boundaries, lower, upper,
// count], boundaries 0 (lower open), 1 (upper open), 2 (both open) or 3
// (both closed).
func appendHistogram(dst []byte, h *histogram.FloatHistogram) []byte {
	dst = append(dst, `{"count":`...)
	dst = appendFloatString(dst, h.Count)
	dst = append(dst, `,"sum":`...)
	dst = appendFloatString(dst, h.Sum)
	first := true
	for it := h.AllBucketIterator(); it.Next(); {
		b := it.At()
		if b.Count == 0 {
			continue
		}
		if first {
			dst = append(dst, `,"buckets":[`...)
		} else {
			dst = append(dst, ',')
		}
		first = false
		dst = appendBucket(dst, b)
	}
	if !first {
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendBucket(dst []byte, b histogram.Bucket[float64]) []byte {
	bounds := byte('2')
	switch {
	case b.LowerInclusive && b.UpperInclusive:
		bounds = '3'
	case b.LowerInclusive:
		bounds = '1'
	case b.UpperInclusive:
		bounds = '0'
	}
	dst = append(dst, '[', bounds, ',')
	dst = appendFloatString(dst, b.Lower)
	dst = append(dst, ',')
	dst = appendFloatString(dst, b.Upper)
	dst = append(dst, ',')
	dst = appendFloatString(dst, b.Count)
	return append(dst, ']')
}

// appendLabels appends a label set as a JSON object, in label order.
func appendLabels(dst []byte, ls labels.Labels) []byte {
	dst = append(dst, '{')
	first := true
	ls.Range(func(l labels.Label) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonw.JSON.AppendPair(dst, l.Name, l.Value)
	})
	return append(dst, '}')
}
