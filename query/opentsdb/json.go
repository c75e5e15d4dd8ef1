package opentsdb

import (
	"math"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/jackson"
	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
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
		var w groupWriter
		dst = r.appendGroupPart(dst, i, &w, o, math.MaxInt)
	}
	return r.appendEnd(dst, len(r.Groups) > 0)
}

// appendEnd appends the summary element, if asked for, and the array's
// end; more says whether groups came before.
func (r *Result) appendEnd(dst []byte, more bool) []byte {
	if r.stats != nil && r.q.ShowSummary {
		if more {
			dst = append(dst, ',')
		}
		dst = r.appendSummary(dst)
	}
	return append(dst, ']')
}

// groupWriter is how far a group's JSON is written, so that a long group
// can be written in parts (Stream): its phase, and in a list phase the
// next element.
type groupWriter struct {
	phase uint8
	open  bool // the phase's list is opened
	i     int
	began time.Time // with statistics: when the group's writing began
}

// The phases of a group's JSON, in order.
const (
	wHead        = iota // metric, tags, aggregateTags, query
	wTSUIDs             // ,"tsuids":[...] with showTSUIDs
	wNotes              // ,"annotations":[...] when any
	wGlobalNotes        // ,"globalAnnotations":[...] when asked and any
	wDPS                // ,"dps":{...} or [...]
	wTail               // statistics and the closing brace
	wDone
)

// appendGroupPart appends group g's JSON from w's position on, until the
// group ends (w.phase is wDone) or dst reaches max bytes, after a whole
// element: a list element is never split.
func (r *Result) appendGroupPart(dst []byte, g int, w *groupWriter, o JSONOptions, max int) []byte {
	grp := &r.Groups[g]
	for w.phase != wDone && len(dst) < max {
		switch w.phase {
		case wHead:
			if r.stats != nil {
				w.began = time.Now()
			}
			dst = r.appendGroupHead(dst, grp)
			w.next(wTSUIDs)
		case wTSUIDs:
			if !r.q.ShowTSUIDs {
				w.next(wNotes)
				continue
			}
			dst = w.list(dst, `,"tsuids":[`, len(grp.TSUIDs), max, func(dst []byte, i int) []byte {
				return appendString(dst, grp.TSUIDs[i])
			})
			w.closeList(&dst, ']', len(grp.TSUIDs), wNotes)
		case wNotes:
			if len(grp.Notes) == 0 || r.q.NoAnnotations {
				w.next(wGlobalNotes)
				continue
			}
			dst = w.list(dst, `,"annotations":[`, len(grp.Notes), max, func(dst []byte, i int) []byte {
				return annotation.AppendJSON(dst, &grp.Notes[i])
			})
			w.closeList(&dst, ']', len(grp.Notes), wGlobalNotes)
		case wGlobalNotes:
			if len(r.GlobalNotes) == 0 || !r.q.GlobalAnnotations || r.q.NoAnnotations {
				w.next(wDPS)
				continue
			}
			dst = w.list(dst, `,"globalAnnotations":[`, len(r.GlobalNotes), max, func(dst []byte, i int) []byte {
				return annotation.AppendJSON(dst, &r.GlobalNotes[i])
			})
			w.closeList(&dst, ']', len(r.GlobalNotes), wDPS)
		case wDPS:
			dst = r.appendDPSPart(dst, grp, w, o, max)
		case wTail:
			if r.stats != nil {
				dst = r.appendGroupStats(dst, g, w.began)
			}
			dst = append(dst, '}')
			w.next(wDone)
		}
	}
	return dst
}

// next moves w to phase p.
func (w *groupWriter) next(p uint8) { w.phase, w.open, w.i = p, false, 0 }

// list appends the elements of a list of n from w.i on, opening it with
// open first, until dst reaches max bytes.
func (w *groupWriter) list(dst []byte, open string, n, max int, elem func([]byte, int) []byte) []byte {
	if !w.open {
		dst, w.open = append(dst, open...), true
	}
	for ; w.i < n && len(dst) < max; w.i++ {
		if w.i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, w.i)
	}
	return dst
}

// closeList ends a list of n whose elements are all written, moving w to
// phase p.
func (w *groupWriter) closeList(dst *[]byte, end byte, n int, p uint8) {
	if w.i == n {
		*dst = append(*dst, end)
		w.next(p)
	}
}

// appendGroupHead appends a group's fields up to its query echo.
func (r *Result) appendGroupHead(dst []byte, g *Group) []byte {
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
	return dst
}

// appendDPSPart appends the group's points from w.i on, as an object
// keyed by timestamp or as an array of pairs.
func (r *Result) appendDPSPart(dst []byte, g *Group, w *groupWriter, o JSONOptions, max int) []byte {
	open, end := byte('{'), byte('}')
	if o.Arrays {
		open, end = '[', ']'
	}
	if !w.open {
		dst, w.open = append(append(dst, `,"dps":`...), open), true
	}
	ms, null, arrays := r.q.MsResolution, fillNull(g.Sub), o.Arrays
	pts := g.Points
	i := w.i
	for ; i < len(pts) && len(dst) < max; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := pts[i]
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
	w.i = i
	w.closeList(&dst, end, len(pts), wTail)
	return dst
}

// fillNull reports whether empty buckets are written as null.
func fillNull(sq *tsquery.SubQuery) bool {
	return sq != nil && sq.DS != nil && sq.DS.Fill == agg.FillNull
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
