package jackson

import "unicode/utf8"

// AppendString appends s as a Jackson JSON string to dst.
func AppendString(dst []byte, s string) []byte {
	return appendQuoted(dst, s, utf8.DecodeRuneInString)
}

// AppendBytes is AppendString for bytes.
func AppendBytes(dst, s []byte) []byte {
	return appendQuoted(dst, s, utf8.DecodeRune)
}

func appendQuoted[S string | []byte](dst []byte, s S, decode func(S) (rune, int)) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := decode(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		}
		i++
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}
