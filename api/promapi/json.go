package promapi

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
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
		dst = appendStrings(dst, warnings)
	}
	if len(infos) > 0 {
		dst = append(dst, `,"infos":`...)
		dst = appendStrings(dst, infos)
	}
	return dst
}

// appendErrorJSON appends Prometheus's error body.
func appendErrorJSON(dst []byte, e *apiError, warnings []string) []byte {
	dst = append(dst, `{"status":"error","errorType":`...)
	dst = appendJSONString(dst, e.typ.name)
	dst = append(dst, `,"error":`...)
	dst = appendJSONString(dst, e.err.Error())
	dst = appendNotices(dst, warnings, nil)
	return append(dst, '}')
}

// appendStrings appends a JSON array of strings.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendQueryData appends {"resultType":T,"result":R} for an engine
// result.
func appendQueryData(dst []byte, v promql.Result) []byte {
	dst = append(dst, `{"resultType":`...)
	dst = appendJSONString(dst, string(v.Value.Type()))
	dst = append(dst, `,"result":`...)
	switch r := v.Value.(type) {
	case promql.Matrix:
		dst = appendMatrix(dst, r)
	case promql.Vector:
		dst = appendVector(dst, r)
	case promql.Scalar:
		dst = appendFloatPair(dst, r.T, r.V)
	case promql.String:
		dst = appendPair(dst, r.T, func(b []byte) []byte { return appendJSONString(b, r.V) })
	default:
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
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

// appendSeries appends {"metric":{..},"values":[..]} and, for native
// histograms, "histograms":[..].
func appendSeries(dst []byte, s promql.Series) []byte {
	dst = append(dst, `{"metric":`...)
	dst = appendLabels(dst, s.Metric)
	if len(s.Floats) > 0 || len(s.Histograms) == 0 {
		dst = append(dst, `,"values":[`...)
		for i, p := range s.Floats {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendFloatPair(dst, p.T, p.F)
		}
		dst = append(dst, ']')
	}
	if len(s.Histograms) > 0 {
		dst = append(dst, `,"histograms":[`...)
		for i, p := range s.Histograms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendHistogramPair(dst, p.T, p.H)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendVector(dst []byte, v promql.Vector) []byte {
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"metric":`...)
		dst = appendLabels(dst, s.Metric)
		if s.H != nil {
			dst = append(dst, `,"histogram":`...)
			dst = appendHistogramPair(dst, s.T, s.H)
		} else {
			dst = append(dst, `,"value":`...)
			dst = appendFloatPair(dst, s.T, s.F)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendPair appends [<seconds>,<value>].
func appendPair(dst []byte, t int64, value func([]byte) []byte) []byte {
	dst = append(dst, '[')
	dst = appendTimestamp(dst, t)
	dst = append(dst, ',')
	dst = value(dst)
	return append(dst, ']')
}

// appendFloatPair appends [<seconds>,"<value>"].
func appendFloatPair(dst []byte, t int64, f float64) []byte {
	dst = append(dst, '[')
	dst = appendTimestamp(dst, t)
	dst = append(dst, ',')
	dst = appendFloatString(dst, f)
	return append(dst, ']')
}

func appendHistogramPair(dst []byte, t int64, h *histogram.FloatHistogram) []byte {
	return appendPair(dst, t, func(b []byte) []byte { return appendHistogram(b, h) })
}

// appendTimestamp appends milliseconds t as decimal seconds, with the
// fraction only when there is one ("1700000000", "1700000000.250").
func appendTimestamp(dst []byte, t int64) []byte {
	if t < 0 {
		dst = append(dst, '-')
		t = -t // MinInt64 stays negative; no query reaches it
	}
	dst = strconv.AppendInt(dst, t/1000, 10)
	frac := t % 1000
	if frac == 0 {
		return dst
	}
	return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// appendFloatString appends f as a JSON string the way Prometheus writes
// sample values: shortest decimal, "NaN", "+Inf", "-Inf".
func appendFloatString(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Inf"`...)
	}
	dst = append(dst, '"')
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
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
		dst = appendJSONString(dst, l.Name)
		dst = append(dst, ':')
		dst = appendJSONString(dst, l.Value)
	})
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string literal, UTF-8 kept, invalid
// bytes replaced by U+FFFD so the output is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		}
		dst = appendJSONByte(dst, c)
		i++
	}
	return append(dst, '"')
}

func appendJSONByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 {
		const hex = "0123456789abcdef"
		return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
	}
	return append(dst, c)
}
