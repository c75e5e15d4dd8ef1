package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Key tags: the first byte of every pebble key says what it holds. Data
// keys start with their table id, whose first byte is at least idBase.
const (
	tagCatalog byte = 0x01        // 0x01 table-name: a table's spec
	tagMeta    byte = 0x02        // 0x02 name: engine bookkeeping (the table id counter)
	idBase     byte = 0x10        // id row* family 0x00 qualifier* ^ms
	idOneMax        = 0xEF - 0x10 // largest id that fits the first byte
	idLong     byte = 0xF0        // 0xF0+n: n big-endian id bytes follow
)

// tsLen is the length of the inverted millisecond timestamp that ends a
// data key. The contract's timestamps are whole milliseconds in
// microseconds, so (2^63-1)/1000 < 2^56 milliseconds fit 7 bytes.
const (
	tsLen  = 7
	tsMask = 1<<56 - 1
)

// Field coding (see doc.go): byte b < 0xFE is written b+1, 0xFE is written
// 0xFF 0x00 and 0xFF is written 0xFF 0x01; a single 0x00 ends the field.
// 0x00 is thus never the first byte of a code, so the terminator sorts below
// any continuation, and row keys full of 0x00 (OpenTSDB's UIDs) cost one
// byte more than their length, not one per zero.
const (
	fieldEnd  byte = 0x00
	fieldWide byte = 0xFF // first byte of the two-byte codes of 0xFE and 0xFF
	famTerm   byte = 0x00
	metaNext       = "next-table-id"
)

var errBadKey = errors.New("malformed key")

// appendField appends the code of src and its terminator to dst.
func appendField(dst, src []byte) []byte {
	for _, b := range src {
		if b < 0xFE {
			dst = append(dst, b+1)
		} else {
			dst = append(dst, fieldWide, b-0xFE)
		}
	}
	return append(dst, fieldEnd)
}

// parseField decodes one field at the start of src, appending it to dst.
// rest follows the terminator. It writes into dst's spare capacity, so a
// reused dst makes it allocation-free. Eight code bytes holding neither the
// terminator nor 0xFF are eight plain codes b+1, decoded as one word (a
// scan decodes every row key it enters: OpenTSDB's 20 to 40 bytes).
func parseField(dst, src []byte) (val, newDst, rest []byte, err error) {
	start := len(dst)
	dst = slices.Grow(dst, len(src))
	out := dst[start : start+len(src)]
	n, i := 0, 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		if hasZeroByte(w) || hasZeroByte(^w) {
			break
		}
		binary.LittleEndian.PutUint64(out[n:], w-ones) // no byte is 0x00: no borrows
		n += 8
	}
	for ; i < len(src); i++ {
		switch b := src[i]; b {
		case fieldEnd:
			dst = dst[:start+n]
			return dst[start:], dst, src[i+1:], nil
		case fieldWide:
			if i+1 == len(src) || src[i+1] > 1 {
				return nil, dst[:start], nil, errBadKey
			}
			i++
			out[n] = 0xFE + src[i]
		default:
			out[n] = b - 1
		}
		n++
	}
	return nil, dst[:start], nil, errBadKey
}

// fieldLen returns the length of the field code at the start of src,
// terminator included, or -1 when src holds no terminator.
func fieldLen(src []byte) int {
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], fieldEnd)
		if i < 0 {
			return -1
		}
		// A 0x00 after 0xFF is the second byte of a code: 0xFF is always a
		// first byte, because second bytes are only 0x00 or 0x01.
		if j := off + i; j == 0 || src[j-1] != fieldWide {
			return j + 1
		}
		off += i + 1
	}
}

// appendID appends a table id as the order-preserving start of a data key:
// ids up to 0xDF are the single byte 0x10+id, larger ones 0xF0+n and n
// minimal big-endian bytes (n = 1..4).
func appendID(dst []byte, id uint32) []byte {
	if id <= idOneMax {
		return append(dst, idBase+byte(id))
	}
	n := (bits.Len32(id) + 7) / 8
	dst = append(dst, idLong+byte(n))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(id>>(8*i)))
	}
	return dst
}

// parseID decodes an id written by appendID and returns its length.
func parseID(src []byte) (uint32, int, error) {
	n := rowStart(src)
	if n < 0 {
		return 0, 0, errBadKey
	}
	if n == 1 {
		return uint32(src[0] - idBase), 1, nil
	}
	var id uint32
	for _, b := range src[1:n] {
		id = id<<8 | uint32(b)
	}
	if id <= idOneMax || (n > 2 && id < 1<<(8*(n-2))) {
		return 0, 0, errBadKey // not minimal
	}
	return id, n, nil
}

// rowStart returns the length of a data key's table id, or -1 when key is
// not a data key.
func rowStart(key []byte) int {
	switch {
	case len(key) == 0 || key[0] < idBase || key[0] > idLong+4 || key[0] == idLong:
		return -1
	case key[0] < idLong:
		return 1
	case 1+int(key[0]-idLong) <= len(key):
		return 1 + int(key[0]-idLong)
	default:
		return -1
	}
}

// appendTablePrefix appends the prefix shared by a table's data keys.
func appendTablePrefix(dst []byte, id uint32) []byte {
	return appendID(dst, id)
}

// appendRowPrefix appends the pebble prefix (see split) of a row: table
// prefix and row field. All cells of the row start with it.
func appendRowPrefix(dst []byte, id uint32, row []byte) []byte {
	return appendField(appendTablePrefix(dst, id), row)
}

// appendColumnPrefix appends family and qualifier field to a row prefix.
func appendColumnPrefix(rowPrefix []byte, family string, qualifier []byte) []byte {
	dst := append(rowPrefix, family...)
	dst = append(dst, famTerm)
	return appendField(dst, qualifier)
}

// appendTimestamp appends the timestamp as inverted big-endian
// milliseconds in 7 bytes, so newer versions sort first.
func appendTimestamp(dst []byte, ts int64) []byte {
	v := tsMask - uint64(ts/1000)
	return append(dst, byte(v>>48), byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// maxMillis is the largest timestamp in milliseconds (int64 microseconds).
const maxMillis = (1<<63 - 1) / 1000

// keyMillis reads the milliseconds coded at the end of a data key.
func keyMillis(key []byte) uint64 {
	b := key[len(key)-tsLen:]
	v := uint64(b[0])<<48 | uint64(b[1])<<40 | uint64(b[2])<<32 | uint64(b[3])<<24 |
		uint64(b[4])<<16 | uint64(b[5])<<8 | uint64(b[6])
	return tsMask - v
}

// keyTimestamp reads the timestamp (microseconds) at the end of a data key.
func keyTimestamp(key []byte) int64 {
	return int64(keyMillis(key)) * 1000
}

// AppendCellKey appends the pebble key of one cell version to dst.
func AppendCellKey(dst []byte, id uint32, row []byte, family string, qualifier []byte, ts int64) []byte {
	dst = appendColumnPrefix(appendRowPrefix(dst, id, row), family, qualifier)
	return appendTimestamp(dst, ts)
}

// cellKey is a decoded data key. Row and Qualifier live in the buffer
// passed to ParseCellKey; Family aliases the key.
type cellKey struct {
	ID        uint32
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64
	// RowPrefixLen is the length of the key's row prefix.
	RowPrefixLen int
}

// ParseCellKey decodes a key written by AppendCellKey, appending the decoded
// row and qualifier to buf, which is returned grown.
func ParseCellKey(buf, key []byte) (k cellKey, newBuf []byte, err error) {
	if len(key) < 1+1+2+1+tsLen {
		return k, buf, fmt.Errorf("%w: %d bytes", errBadKey, len(key))
	}
	id, n, err := parseID(key)
	if err != nil {
		return k, buf, fmt.Errorf("table id: %w", err)
	}
	k.ID = id
	var rest []byte
	k.Row, buf, rest, err = parseField(buf, key[n:])
	if err != nil {
		return k, buf, fmt.Errorf("row: %w", err)
	}
	k.RowPrefixLen = len(key) - len(rest)
	return parseColumn(k, buf, rest)
}

// parseColumn decodes family, qualifier and timestamp after a row prefix.
func parseColumn(k cellKey, buf, rest []byte) (cellKey, []byte, error) {
	i := bytes.IndexByte(rest, famTerm)
	if i <= 0 {
		return k, buf, fmt.Errorf("family: %w", errBadKey)
	}
	k.Family = rest[:i:i]
	var err error
	k.Qualifier, buf, rest, err = parseField(buf, rest[i+1:])
	if err != nil {
		return k, buf, fmt.Errorf("qualifier: %w", err)
	}
	if len(rest) != tsLen {
		return k, buf, fmt.Errorf("timestamp of %d bytes: %w", len(rest), errBadKey)
	}
	if keyMillis(rest) > maxMillis {
		return k, buf, fmt.Errorf("timestamp beyond int64 microseconds: %w", errBadKey)
	}
	k.Timestamp = keyTimestamp(rest)
	return k, buf, nil
}

// split returns the length of a key's row prefix: table prefix plus row
// field. Keys that are not data keys, or are cut short (index separators),
// are their own prefix. Because a row field is never a prefix of another,
// ordering keys by (prefix, rest) bytewise equals ordering them bytewise, as
// pebble's Comparer.Split contract demands.
func split(key []byte) int {
	s := rowStart(key)
	if s < 0 {
		return len(key)
	}
	n := fieldLen(key[s:])
	if n < 0 {
		return len(key)
	}
	return s + n
}

// prefixSuccessor returns the smallest key greater than every key starting
// with p, reusing dst. p must end with a byte below 0xFF (terminators do).
func prefixSuccessor(dst, p []byte) []byte {
	dst = append(dst[:0], p...)
	for i := len(dst) - 1; i >= 0; i-- {
		if dst[i] != 0xFF {
			dst[i]++
			return dst[:i+1]
		}
	}
	return nil
}

// comparer orders keys bytewise and splits them at the row so bloom filters
// answer "does this row exist" and NextPrefix skips to the next row.
var comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Name = "tsd.storage.rowsplit.v2"
	c.Split = split
	c.ImmediateSuccessor = immediateSuccessor
	return &c
}()

// immediateSuccessor appends the smallest prefix key after prefix key a.
// Every key extending a row prefix has that row prefix, so the next prefix
// key after a row prefix is its bytewise successor (the terminator becomes
// the code of byte 0x00). Any other prefix key gains a 0x00, which either
// ends its row field or completes a two-byte code: a prefix key either way.
func immediateSuccessor(dst, a []byte) []byte {
	dst = append(dst, a...)
	if s := rowStart(a); s >= 0 && split(a) == len(a) && len(a) > s && fieldLen(a[s:]) == len(a)-s {
		dst[len(dst)-1]++
		return dst
	}
	return append(dst, 0)
}
