package opentsdb

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/jsonw"
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
	dst = slices.Grow(dst, r.sizeHint())
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

// sizeHint guesses the answer's size, so that AppendJSON grows dst once
// instead of doubling it (and copying it) a dozen times for a large
// answer: 32 bytes a point (a quoted ten-digit timestamp and a double of
// up to 17 digits) and 256 a group.
func (r *Result) sizeHint() int {
	n := 0
	for i := range r.Groups {
		n += 256 + 32*len(r.Groups[i].Points)
	}
	return n
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
	ts    jsonw.Stamps
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
				return jsonw.Jackson.AppendString(dst, grp.TSUIDs[i])
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
	dst = jsonw.Jackson.AppendString(dst, g.Metric)
	dst = append(dst, `,"tags":`...)
	dst = jsonw.AppendTags(jsonw.Jackson, dst, g.Tags)
	dst = append(dst, `,"aggregateTags":`...)
	dst = jsonw.Jackson.AppendStrings(dst, g.AggregateTags)
	if r.q.ShowQuery {
		dst = append(dst, `,"query":`...)
		dst = appendSubQuery(dst, g.Sub, r.Table(g.Sub.Index))
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
			dst = w.ts.Append(append(dst, '['), ts)
			dst = append(appendValue(append(dst, ','), p, null), ']')
			continue
		}
		dst = append(w.ts.Append(append(dst, '"'), ts), '"', ':')
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
	if null && math.IsNaN(f) {
		return append(dst, "null"...)
	}
	return jsonw.AppendJacksonDouble(dst, f)
}
