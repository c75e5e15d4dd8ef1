package parse

import (
	"slices"
	"unicode/utf8"
)

// OpenTSDB keeps a point's tags in a java.util.HashMap and prints the map
// in its error messages and echoes: what follows gives tsd's answers the
// same order.

// JavaHashMapOrder returns the indexes of tags (distinct keys, in
// insertion order) in the order a java.util.HashMap (Java 8+) filled with
// them iterates: by bucket, (h ^ h>>>16) & (capacity-1) of the key's
// String.hashCode, and in insertion order within a bucket. The capacity
// starts at 16 and doubles while the size is over three quarters of it.
// scratch holds the index and bucket slices between calls.
func JavaHashMapOrder(tags []Tag, scratch *[]int) []int {
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

// AppendJavaMap appends tags (distinct keys) as Java prints a HashMap of
// them: {k=v, k2=v2}, in JavaHashMapOrder. scratch is as there.
func AppendJavaMap(dst []byte, tags []Tag, scratch *[]int) []byte {
	dst = append(dst, '{')
	for i, j := range JavaHashMapOrder(tags, scratch) {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, tags[j].Key...)
		dst = append(dst, '=')
		dst = append(dst, tags[j].Value...)
	}
	return append(dst, '}')
}
