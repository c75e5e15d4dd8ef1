package expr

import (
	"math"
	"slices"
	"strconv"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// AppendJSON appends OpenTSDB's expression answer:
// {"outputs":[{"id","alias","dps":[[ts,v1,...]],"dpsMeta":{...},"meta":[...]}],"query":...}.
// Each output's rows are the union of its series' timestamps (ms) in the
// query range; a series without a point at a row's time is NaN ("NaN").
func (r *Result) AppendJSON(dst []byte) []byte {
	var c JSONCursor
	dst, _ = r.AppendJSONPart(dst, &c, math.MaxInt)
	return dst
}

// JSONCursor is how far AppendJSONPart has written a Result; its zero
// value starts at the beginning.
type JSONCursor struct {
	begun bool    // {"outputs":[ is written
	out   int     // the output being written
	rows  []int64 // its rows, nil until its head is written
	row   int     // its next row
}

// AppendJSONPart appends AppendJSON's bytes from c on, until the answer
// ends (done) or dst reaches max bytes, after a whole row.
func (r *Result) AppendJSONPart(dst []byte, c *JSONCursor, max int) (out []byte, done bool) {
	if !c.begun {
		dst, c.begun = append(dst, `{"outputs":[`...), true
	}
	for c.out < len(r.outputs) && len(dst) < max {
		o := &r.outputs[c.out]
		if c.rows == nil {
			if c.out > 0 {
				dst = append(dst, ',')
			}
			dst = appendOutputHead(dst, o)
			c.rows, c.row = r.rows(o.sets), 0
		}
		for ; c.row < len(c.rows) && len(dst) < max; c.row++ {
			if c.row > 0 {
				dst = append(dst, ',')
			}
			dst = appendRow(dst, c.rows[c.row], o.sets)
		}
		if c.row < len(c.rows) {
			return dst, false
		}
		dst = appendOutputTail(dst, o, c.rows)
		c.out, c.rows = c.out+1, nil
	}
	if c.out < len(r.outputs) {
		return dst, false
	}
	dst = append(dst, `],"query":`...)
	if len(r.q.raw) > 0 {
		dst = append(dst, r.q.raw...)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}'), true
}

// appendOutputHead appends an output's fields up to its rows' array.
func appendOutputHead(dst []byte, o *outputSets) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonw.Jackson.AppendString(dst, o.out.ID)
	if o.out.Alias != "" {
		dst = append(dst, `,"alias":`...)
		dst = jsonw.Jackson.AppendString(dst, o.out.Alias)
	}
	return append(dst, `,"dps":[`...)
}

// appendRow appends one row: its time and each set's value then.
func appendRow(dst []byte, t int64, sets []*set) []byte {
	dst = append(dst, '[')
	dst = strconv.AppendInt(dst, t, 10)
	for _, s := range sets {
		dst = append(dst, ',')
		dst = jsonw.AppendJacksonDouble(dst, valueAt(s, t))
	}
	return append(dst, ']')
}

// appendOutputTail appends what follows an output's rows.
func appendOutputTail(dst []byte, o *outputSets, rows []int64) []byte {
	first, last := int64(0), int64(0)
	if len(rows) > 0 {
		first, last = rows[0], rows[len(rows)-1]
	}
	dst = append(dst, `],"dpsMeta":{"firstTimestamp":`...)
	dst = strconv.AppendInt(dst, first, 10)
	dst = append(dst, `,"lastTimestamp":`...)
	dst = strconv.AppendInt(dst, last, 10)
	dst = append(dst, `,"setCount":`...)
	dst = strconv.AppendInt(dst, int64(len(rows)), 10)
	dst = append(dst, `,"series":`...)
	dst = strconv.AppendInt(dst, int64(len(o.sets)), 10)
	dst = append(dst, '}')
	if len(o.sets) > 0 {
		dst = appendMeta(dst, o.sets)
	}
	return append(dst, '}')
}

// rows is the union of the sets' timestamps within the query range.
func (r *Result) rows(sets []*set) []int64 {
	var ts []int64
	for _, s := range sets {
		for _, t := range s.ts {
			if t >= r.start && t <= r.end {
				ts = append(ts, t)
			}
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

func appendMeta(dst []byte, sets []*set) []byte {
	dst = append(dst, `,"meta":[{"index":0,"metrics":["timestamp"]}`...)
	for i, s := range sets {
		dst = append(dst, `,{"index":`...)
		dst = strconv.AppendInt(dst, int64(i+1), 10)
		dst = append(dst, `,"metrics":`...)
		dst = jsonw.Jackson.AppendStrings(dst, s.metrics)
		dst = append(dst, `,"commonTags":`...)
		dst = jsonw.Jackson.AppendSortedMap(dst, s.tags)
		dst = append(dst, `,"aggregatedTags":`...)
		dst = jsonw.Jackson.AppendStrings(dst, s.aggTags)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
