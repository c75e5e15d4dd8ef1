package jsonw

import "slices"

// AppendNullable appends s as m escapes it, or null when s is empty.
func (m Mode) AppendNullable(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s, m)
}

// AppendStrings appends ss as a JSON array of strings; nil is [].
func (m Mode) AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s, m)
	}
	return append(dst, ']')
}

// AppendKey appends the start of an object's member, "key":.
func (m Mode) AppendKey(dst []byte, key string) []byte {
	return append(appendString(dst, key, m), ':')
}

// AppendPair appends one member of an object, "key":"value".
func (m Mode) AppendPair(dst []byte, key, value string) []byte {
	return appendString(m.AppendKey(dst, key), value, m)
}

// Tag is the shape of a tag in every API's types (opentsdb.Tag,
// last.Tag, meta.Pair, api.StatTag): two strings, Key and Value.
type Tag interface{ ~struct{ Key, Value string } }

// AppendTags appends tags as a JSON object of strings, in their order,
// escaped as m escapes them.
func AppendTags[T Tag](m Mode, dst []byte, tags []T) []byte {
	dst = append(dst, '{')
	for i, t := range tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		kv := struct{ Key, Value string }(t)
		dst = m.AppendPair(dst, kv.Key, kv.Value)
	}
	return append(dst, '}')
}

// AppendSortedMap appends kv as a JSON object of strings, its keys in byte
// order; nil is {}.
func (m Mode) AppendSortedMap(dst []byte, kv map[string]string) []byte {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = m.AppendPair(dst, k, kv[k])
	}
	return append(dst, '}')
}
