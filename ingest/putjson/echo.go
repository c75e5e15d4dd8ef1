package putjson

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/jackson"
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
// whose tags were cut at MaxTags is echoed as sent (Raw). Valid until the
// next Next or Reset, like Raw.
func (d *Decoder) AppendEcho(dst []byte) []byte {
	e := &d.elem
	ts, ok := timestamp(e.ts, e.tsKind)
	if e.typeErr != "" || e.nullTag || e.extraTags > 0 || !ok {
		return append(dst, d.raw...)
	}
	dst = append(dst, '{')
	if hasText(e.metricKind) {
		dst = append(dst, `"metric":`...)
		dst = jackson.AppendBytes(dst, e.metric)
		dst = append(dst, ',')
	}
	dst = append(dst, `"timestamp":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	if hasText(e.valueKind) {
		dst = append(dst, `,"value":`...)
		dst = jackson.AppendBytes(dst, e.value)
	}
	if e.tagsObj {
		dst = append(dst, `,"tags":{`...)
		for i, j := range javaHashMapOrder(d.pt.Tags, &d.order) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jackson.AppendBytes(dst, d.pt.Tags[j].Key)
			dst = append(dst, ':')
			dst = jackson.AppendBytes(dst, d.pt.Tags[j].Value)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// hasText reports a field Jackson reads into a non-null String: a string,
// a number or a boolean (coerced to its text).
func hasText(kind int) bool {
	return kind == kindString || kind == kindNumber || kind == kindBool
}

// javaHashMapOrder returns the indexes of tags (distinct keys, in
// insertion order) in the order a java.util.HashMap (Java 8+) filled with
// them iterates: by bucket, (h ^ h>>>16) & (capacity-1) of the key's
// String.hashCode, and in insertion order within a bucket. The capacity
// starts at 16 and doubles while the size is over three quarters of it.
// scratch holds the index and bucket slices between calls.
func javaHashMapOrder(tags []parse.Tag, scratch *[]int) []int {
	n := len(tags)
	capacity := 16
	for n > capacity/4*3 {
		capacity *= 2
	}
	buf := slices.Grow((*scratch)[:0], 2*n)[:2*n]
	*scratch = buf
	order, bucket := buf[:n], buf[n:]
	for i, t := range tags {
		h := javaStringHash(t.Key)
		order[i], bucket[i] = i, int((h^h>>16)&uint32(capacity-1))
	}
	slices.SortStableFunc(order, func(a, b int) int { return bucket[a] - bucket[b] })
	return order
}

// javaStringHash is Java's String.hashCode of the UTF-8 text s: 31*h + c
// over its UTF-16 code units.
func javaStringHash(s []byte) uint32 {
	var h uint32
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + uint32(0xD800+(r>>10))
			r = 0xDC00 + r&0x3FF
		}
		h = 31*h + uint32(r)
	}
	return h
}
