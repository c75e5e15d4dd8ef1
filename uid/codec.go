package uid

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/tsd-db/tsd/schema"
)

// ID is a unique ID. It is stored big-endian on its kind's width (1..8
// bytes); IDs start at 1 and 0 is never assigned.
type ID uint64

// MaxIDForWidth returns the largest ID that fits in width bytes. The 8-byte
// case is capped by the signed 64-bit MAXID counter.
func MaxIDForWidth(width int) ID {
	if width >= 8 {
		return math.MaxInt64
	}
	return ID(1)<<(8*uint(width)) - 1
}

// AppendID appends id big-endian on width bytes. Higher bytes of id that do
// not fit are dropped; callers check against MaxIDForWidth first.
func AppendID(dst []byte, id ID, width int) []byte {
	for shift := 8 * (width - 1); shift >= 0; shift -= 8 {
		dst = append(dst, byte(id>>uint(shift)))
	}
	return dst
}

// ParseID reads a width-byte big-endian ID from the front of src.
func ParseID(src []byte, width int) (id ID, rest []byte, err error) {
	if width < 1 || width > 8 {
		return 0, src, fmt.Errorf("uid width %d out of range 1..8", width)
	}
	if len(src) < width {
		return 0, src, fmt.Errorf("uid of %d bytes is shorter than its width %d", len(src), width)
	}
	for _, c := range src[:width] {
		id = id<<8 | ID(c)
	}
	return id, src[width:], nil
}

// parseExactID reads a cell value that must be exactly one UID.
func parseExactID(v []byte, width int) (ID, error) {
	if len(v) != width {
		return 0, fmt.Errorf("uid of %d bytes, expected %d", len(v), width)
	}
	id, _, err := ParseID(v, width)
	return id, err
}

// EncodeName appends the stored form of a UTF-8 name in a store of format
// f. In schema.FormatDense that is the name itself; in
// schema.FormatOpenTSDB each character becomes one Latin-1 byte, and a
// character above U+00FF is ErrNotLatin1. Invalid UTF-8 is ErrInvalidName
// in schema.FormatOpenTSDB; schema.FormatDense copies bytes as they are.
func EncodeName(f schema.Format, dst, name []byte) ([]byte, error) {
	if f != schema.FormatOpenTSDB || isASCII(name) {
		return append(dst, name...), nil
	}
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRune(name[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, &NameError{Kind: NumKinds, Name: string(name), BadUTF8: true}
		}
		if r > 0xFF {
			return dst, fmt.Errorf("%w: name %q has %q (%U); tables in opentsdb format store names as Latin-1, as OpenTSDB does",
				ErrNotLatin1, name, r, r)
		}
		dst = append(dst, byte(r))
		i += n
	}
	return dst, nil
}

// DecodeName appends the UTF-8 form of a name stored in a store of format
// f: bytes as they are in schema.FormatDense, each byte as the character
// U+0000..U+00FF in schema.FormatOpenTSDB.
func DecodeName(f schema.Format, dst, stored []byte) []byte {
	if f != schema.FormatOpenTSDB || isASCII(stored) {
		return append(dst, stored...)
	}
	for _, c := range stored {
		dst = utf8.AppendRune(dst, rune(c))
	}
	return dst
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
