package putjson

import (
	"bytes"

	"github.com/tsd-db/tsd/ingest/parse"
)

// element is the raw content of one data point object.
type element struct {
	metric, ts, value []byte
	metricKind        int
	tsKind            int
	valueKind         int
	typeErr           string // first shape problem, in field order
	nullTag           bool   // a tag value was null
	tagsObj           bool   // the last "tags" was an object (AppendEcho)
	extraTags         int    // tags beyond MaxListedTags (not compared)
	mask              uint64 // hashes of the tag keys
	// The /api/rollup fields (RollupFields); ignored by /api/put.
	interval, agg, groupBy             []byte
	intervalKind, aggKind, groupByKind int
	// The /api/histogram fields (HistogramFields); ignored by the others.
	id, underflow, overflow     []byte
	idKind, underKind, overKind int
	buckets                     []byte // the raw JSON object
	bucketsKind                 int
}

// element reads one array element or the body's object into d.elem and
// d.pt's tags; false on a syntax error.
func (d *Decoder) element() bool {
	d.elem = element{}
	d.pt.Reset()
	d.buf = d.buf[:0]
	if d.peek() != '{' {
		if !d.skipValue() {
			return false
		}
		d.elem.typeErr = msgNotAnObject
		return true
	}
	d.pos++
	if d.peek() == '}' {
		d.pos++
		return true
	}
	for {
		if d.peek() != '"' {
			return d.fail("expected a string key in object")
		}
		key, ok := d.str()
		if !ok || !d.expect(':', "expected ':' after an object key") || !d.field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return true
		default:
			return d.fail("expected ',' or '}' in object")
		}
	}
}

// field reads the value of one data point field.
func (d *Decoder) field(key []byte) bool {
	e := &d.elem
	var ok bool
	switch string(key) {
	case "metric":
		e.metric, e.metricKind, ok = d.scalar()
		d.shape(e.metricKind, `"metric"`)
	case "timestamp":
		e.ts, e.tsKind, ok = d.scalar()
		d.shape(e.tsKind, `"timestamp"`)
	case "value":
		e.value, e.valueKind, ok = d.scalar()
		d.shape(e.valueKind, `"value"`)
	case "interval":
		e.interval, e.intervalKind, ok = d.scalar()
		d.shape(e.intervalKind, `"interval"`)
	case "aggregator":
		e.agg, e.aggKind, ok = d.scalar()
		d.shape(e.aggKind, `"aggregator"`)
	case "groupByAggregator":
		e.groupBy, e.groupByKind, ok = d.scalar()
		d.shape(e.groupByKind, `"groupByAggregator"`)
	case "id", "underflow", "overflow", "buckets":
		if !d.histo {
			return d.skipValue()
		}
		return d.histField(key)
	case "tags":
		d.pt.Tags, e.mask, e.extraTags, e.nullTag, e.tagsObj = d.pt.Tags[:0], 0, 0, false, false
		if c := d.peek(); c == '{' {
			e.tagsObj = true
			return d.tags()
		}
		var kind int
		_, kind, ok = d.scalar()
		if kind != kindNull {
			d.typeError(`Invalid type for "tags": expected an object`)
		}
	default:
		ok = d.skipValue()
	}
	return ok
}

// shape notes a composite where a scalar belongs.
func (d *Decoder) shape(kind int, name string) {
	if kind == kindComposite {
		d.typeError("Invalid type for " + name + ": expected a string or a number")
	}
}

func (d *Decoder) typeError(msg string) {
	if d.elem.typeErr == "" {
		d.elem.typeErr = msg
	}
}

// tags reads the tags object at d.pos.
func (d *Decoder) tags() bool {
	d.pos++
	if d.peek() == '}' {
		d.pos++
		return true
	}
	for {
		if d.peek() != '"' {
			return d.fail("expected a string key in object")
		}
		key, ok := d.str()
		if !ok || !d.expect(':', "expected ':' after an object key") {
			return false
		}
		val, kind, ok := d.scalar()
		if !ok {
			return false
		}
		switch kind {
		case kindComposite:
			d.typeError(`Invalid type for tag "` + string(key) + `": expected a string`)
		case kindNull:
			d.elem.nullTag = true
		default:
			d.addTag(key, val)
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return true
		default:
			return d.fail("expected ',' or '}' in object")
		}
	}
}

// addTag adds or replaces (a repeated key keeps its last value) a tag.
func (d *Decoder) addTag(key, val []byte) {
	e := &d.elem
	if len(key) > 0 {
		bit := uint64(1) << ((uint(len(key))*7 + uint(key[0])*3 + uint(key[len(key)-1])) & 63)
		if e.mask&bit != 0 {
			for i := range d.pt.Tags {
				if bytes.Equal(d.pt.Tags[i].Key, key) {
					d.pt.Tags[i].Value = val
					return
				}
			}
		}
		e.mask |= bit
	}
	if len(d.pt.Tags) >= max(d.opts.MaxTags, MaxListedTags) {
		e.extraTags++
		return
	}
	d.pt.Tags = append(d.pt.Tags, parse.Tag{Key: key, Value: val})
}
