package putjson

import (
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/jsonw"
)

// AppendEcho appends the current element as OpenTSDB 2.4 echoes a refused
// data point in /api/put?details: its IncomingDataPoint serialized by
// Jackson (@JsonInclude NON_NULL, properties in field order metric,
// timestamp, value, tags). The value is always a string (a number keeps
// its text, 6.7 -> "6.7"), the timestamp is the long Jackson read (0 when
// absent, a fraction truncated, a numeric string parsed), an absent or
// null metric, value or tags is left out, and the tags come in the
// iteration order of the java.util.HashMap Jackson filled. An element
// whose shape OpenTSDB refuses for the whole body (an object where a
// string belongs, a timestamp that is no number, a null tag value) or
// with more than MaxListedTags tags is echoed as sent (Raw). Valid until the
// next Next or Reset, like Raw.
func (d *Decoder) AppendEcho(dst []byte) []byte { return d.appendEcho(dst, false) }

// AppendRollupEcho is AppendEcho for /api/rollup: OpenTSDB's
// RollUpDataPoint, serialized without its null fields, adds interval,
// aggregator and groupByAggregator after the tags when they were given.
func (d *Decoder) AppendRollupEcho(dst []byte) []byte { return d.appendEcho(dst, true) }

func (d *Decoder) appendEcho(dst []byte, rollup bool) []byte {
	e := &d.elem
	ts, ok := timestamp(e.ts, e.tsKind)
	if e.typeErr != "" || e.nullTag || e.extraTags > 0 || !ok {
		return append(dst, d.raw...)
	}
	dst = append(dst, '{')
	if hasText(e.metricKind) {
		dst = append(dst, `"metric":`...)
		dst = jsonw.Jackson.AppendBytes(dst, e.metric)
		dst = append(dst, ',')
	}
	dst = append(dst, `"timestamp":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	if hasText(e.valueKind) {
		dst = append(dst, `,"value":`...)
		dst = jsonw.Jackson.AppendBytes(dst, e.value)
	}
	if e.tagsObj {
		dst = append(dst, `,"tags":{`...)
		for i, j := range parse.JavaHashMapOrder(d.pt.Tags, &d.order) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.Jackson.AppendBytes(dst, d.pt.Tags[j].Key)
			dst = append(dst, ':')
			dst = jsonw.Jackson.AppendBytes(dst, d.pt.Tags[j].Value)
		}
		dst = append(dst, '}')
	}
	if rollup {
		for _, f := range [...]struct {
			name string
			kind int
			v    []byte
		}{{`,"interval":`, e.intervalKind, e.interval}, {`,"aggregator":`, e.aggKind, e.agg}, {`,"groupByAggregator":`, e.groupByKind, e.groupBy}} {
			if hasText(f.kind) {
				dst = jsonw.Jackson.AppendBytes(append(dst, f.name...), f.v)
			}
		}
	}
	return append(dst, '}')
}

// hasText reports a field Jackson reads into a non-null String: a string,
// a number or a boolean (coerced to its text).
func hasText(kind int) bool {
	return kind == kindString || kind == kindNumber || kind == kindBool
}
