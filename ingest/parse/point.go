package parse

import (
	"strconv"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// Tag is one tag of a parsed point (an Influx tag, a Prometheus label).
// Key and Value alias the parser's buffers; see the package doc. It is
// uid.Tag itself, so a point's tags reach the UID layer in one bulk copy
// rather than field by field.
type Tag = uid.Tag

// Point is one parsed data point. Metric and the tags alias the parser's
// input or buffers and are valid until the parser advances; Value.T is
// milliseconds since the epoch.
type Point struct {
	// Metric is the metric name (Influx: measurement, separator, field key;
	// Prometheus: the __name__ label).
	Metric []byte
	// Tags are the point's tags in input order, without duplicates.
	Tags []Tag
	// Value is the timestamped, typed value.
	Value series.Point
	// Key, when not nil, is the series' names as the decoder read them,
	// byte for byte: two points whose Keys are equal name the same series,
	// so a consumer that knows a series by its Key need not look at its
	// names. Decoders of different protocols start their Keys with
	// different bytes (remote write: its label field's tag 0x0a; Influx:
	// 'I'; telnet: 'T'). A decoder that sets it may leave Metric and Tags
	// unread until its ParseNames (NamesDecoder).
	Key []byte
}

// Reset empties p, keeping the capacity of Tags.
func (p *Point) Reset() {
	p.Metric = nil
	p.Tags = p.Tags[:0]
	p.Value = series.Point{}
	p.Key = nil
}

// AddTag appends a tag, reusing Tags' capacity.
func (p *Point) AddTag(key, value []byte) {
	p.Tags = append(p.Tags, Tag{Key: key, Value: value})
}

// Clone returns a deep copy of p that owns its bytes.
func (p *Point) Clone() Point {
	c := Point{Metric: clone(p.Metric), Value: p.Value, Key: clone(p.Key)}
	if len(p.Tags) > 0 {
		c.Tags = make([]Tag, len(p.Tags))
		for i, t := range p.Tags {
			c.Tags[i] = Tag{Key: clone(t.Key), Value: clone(t.Value)}
		}
	}
	return c
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// String formats p for tests and logs: metric{k=v,...} T value, the value
// suffixed with its kind (i, f32, f64).
func (p *Point) String() string {
	b := append([]byte{}, p.Metric...)
	b = append(b, '{')
	for i, t := range p.Tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.Key...)
		b = append(b, '=')
		b = append(b, t.Value...)
	}
	b = append(b, "} "...)
	b = strconv.AppendInt(b, p.Value.T, 10)
	b = append(b, ' ')
	return string(AppendValue(b, p.Value))
}

// AppendValue appends v's value and kind suffix: "42i", "1.5f32", "0.1f64".
func AppendValue(dst []byte, v series.Point) []byte {
	switch v.Kind {
	case series.Int:
		return append(strconv.AppendInt(dst, v.Int(), 10), 'i')
	case series.Float32:
		return append(strconv.AppendFloat(dst, v.Float(), 'g', -1, 32), "f32"...)
	}
	return append(strconv.AppendFloat(dst, v.Float(), 'g', -1, 64), "f64"...)
}
