package query

import (
	"math"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/jackson"
	"github.com/tsd-db/tsd/internal/series"
	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/tsquery"
)

// JSONOptions are the serializer's request options.
type JSONOptions struct {
	// Arrays writes dps as [[ts,v],...] instead of {"ts":v,...}
	// (OpenTSDB 2.4's ?arrays).
	Arrays bool
}

// AppendJSON appends OpenTSDB's /api/query response for r: a JSON array of
// the groups, fields as the package doc lists them.
func (r *Result) AppendJSON(dst []byte, o JSONOptions) []byte {
	dst = append(dst, '[')
	for i := range r.Groups {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.appendGroup(dst, i, o)
	}
	if r.stats != nil && r.q.ShowSummary {
		if len(r.Groups) > 0 {
			dst = append(dst, ',')
		}
		dst = r.appendSummary(dst)
	}
	return append(dst, ']')
}

func (r *Result) appendGroup(dst []byte, i int, o JSONOptions) []byte {
	g := &r.Groups[i]
	var began time.Time
	if r.stats != nil {
		began = time.Now()
	}
	dst = append(dst, `{"metric":`...)
	dst = appendString(dst, g.Metric)
	dst = append(dst, `,"tags":{`...)
	for i, t := range g.Tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendString(dst, t.Key), ':')
		dst = appendString(dst, t.Value)
	}
	dst = append(dst, `},"aggregateTags":`...)
	dst = appendStrings(dst, g.AggregateTags)
	if r.q.ShowQuery {
		dst = append(dst, `,"query":`...)
		dst = appendSubQuery(dst, g.Sub)
	}
	if r.q.ShowTSUIDs {
		dst = append(dst, `,"tsuids":`...)
		dst = appendStrings(dst, g.TSUIDs)
	}
	if len(g.Notes) > 0 && !r.q.NoAnnotations {
		dst = appendNotes(append(dst, `,"annotations":`...), g.Notes)
	}
	if len(r.GlobalNotes) > 0 && r.q.GlobalAnnotations && !r.q.NoAnnotations {
		dst = appendNotes(append(dst, `,"globalAnnotations":`...), r.GlobalNotes)
	}
	dst = append(dst, `,"dps":`...)
	dst = appendDPS(dst, g.Points, r.q.MsResolution, o.Arrays, fillNull(g.Sub))
	if r.stats != nil {
		dst = r.appendGroupStats(dst, i, began)
	}
	return append(dst, '}')
}

// fillNull reports whether empty buckets are written as null.
func fillNull(sq *tsquery.SubQuery) bool {
	return sq != nil && sq.DS != nil && sq.DS.Fill == agg.FillNull
}

// appendDPS appends the points as an object keyed by timestamp or as an
// array of pairs.
func appendDPS(dst []byte, pts []series.Point, ms, arrays, null bool) []byte {
	open, end := byte('{'), byte('}')
	if arrays {
		open, end = '[', ']'
	}
	dst = append(dst, open)
	for i, p := range pts {
		if i > 0 {
			dst = append(dst, ',')
		}
		ts := p.T
		if !ms {
			ts /= 1000
		}
		if arrays {
			dst = strconv.AppendInt(append(dst, '['), ts, 10)
			dst = append(appendValue(append(dst, ','), p, null), ']')
			continue
		}
		dst = append(strconv.AppendInt(append(dst, '"'), ts, 10), '"', ':')
		dst = appendValue(dst, p, null)
	}
	return append(dst, end)
}

// appendValue appends an integer as a JSON integer and a double as Jackson
// writes it; NaN is "NaN", or null when null is set.
func appendValue(dst []byte, p series.Point, null bool) []byte {
	if p.IsInt() {
		return strconv.AppendInt(dst, p.Int(), 10)
	}
	f := p.Float()
	switch {
	case math.IsNaN(f) && null:
		return append(dst, "null"...)
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return AppendJavaDouble(dst, f)
}

// AppendJavaDouble appends a finite f as Java's Double.toString writes it:
// plain decimal with at least one fractional digit for magnitudes in
// [1e-3, 1e7), otherwise d.dddE[-]n.
func AppendJavaDouble(dst []byte, f float64) []byte { return appendJava(dst, f, 64) }

// AppendJavaFloat appends a finite f as Java's Float.toString writes it,
// which is how Jackson writes a float field: the shortest digits that
// read back to float32(f), in Double.toString's layout.
func AppendJavaFloat(dst []byte, f float32) []byte { return appendJava(dst, float64(f), 32) }

// appendJava formats f as Java's Double.toString (bits 64) or
// Float.toString (bits 32) does.
func appendJava(dst []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	if abs == 0 || (abs >= 1e-3 && abs < 1e7) {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bits)
		for _, c := range dst[start:] {
			if c == '.' {
				return dst
			}
		}
		return append(dst, '.', '0')
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	e := 0
	for s[e] != 'e' {
		e++
	}
	dst = append(dst, s[:e]...)
	if !containsDot(s[:e]) {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	exp := s[e+1:]
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

func containsDot(b []byte) bool {
	for _, c := range b {
		if c == '.' {
			return true
		}
	}
	return false
}

// appendNotes appends annotations as the HTTP API writes them.
func appendNotes(dst []byte, notes []annotation.Annotation) []byte {
	dst = append(dst, '[')
	for i := range notes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = annotation.AppendJSON(dst, &notes[i])
	}
	return append(dst, ']')
}

// appendStrings appends a JSON array of strings.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendString appends s as a JSON string the way OpenTSDB's Jackson
// writer does (internal/jackson).
func appendString(dst []byte, s string) []byte { return jackson.AppendString(dst, s) }
