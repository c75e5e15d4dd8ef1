package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Key tags: the first byte of every pebble key says what it holds.
const (
	tagCatalog byte = 0x01 // 0x01 table-name: a table's spec
	tagMeta    byte = 0x02 // 0x02 name: engine bookkeeping (the table id counter)
	tagData    byte = 0x10 // 0x10 table-id row* family 0x00 qualifier* ^ts
)

// headerLen is the tag byte plus the 4-byte table id that start a data key.
const headerLen = 5

// tsLen is the length of the inverted timestamp that ends a data key.
const tsLen = 8

// Escape bytes: inside an escaped field 0x00 is written 0x00 0xFF, and the
// field ends with 0x00 0x01, so a field's encoding is never a prefix of
// another's and byte order of encodings equals byte order of the raw values.
const (
	escByte  byte = 0x00
	escZero  byte = 0xFF
	escTerm  byte = 0x01
	famTerm  byte = 0x00
	metaNext      = "next-table-id"
)

var errBadKey = errors.New("malformed key")

// appendEscaped appends the order-preserving escape of src and its
// terminator to dst.
func appendEscaped(dst, src []byte) []byte {
	for {
		i := bytes.IndexByte(src, escByte)
		if i < 0 {
			dst = append(dst, src...)
			return append(dst, escByte, escTerm)
		}
		dst = append(dst, src[:i+1]...)
		dst = append(dst, escZero)
		src = src[i+1:]
	}
}

// appendEscapedOpen appends the escape of src without its terminator: every
// escaped value that starts with src starts with these bytes.
func appendEscapedOpen(dst, src []byte) []byte {
	dst = appendEscaped(dst, src)
	return dst[:len(dst)-2]
}

// parseEscaped decodes one escaped field at the start of src. When the field
// has no escaped zero the value aliases src and dst is untouched; otherwise
// the value is appended to dst. rest follows the terminator.
func parseEscaped(dst, src []byte) (val, newDst, rest []byte, err error) {
	i := bytes.IndexByte(src, escByte)
	if i < 0 || i+1 >= len(src) {
		return nil, dst, nil, errBadKey
	}
	if src[i+1] == escTerm {
		return src[:i:i], dst, src[i+2:], nil
	}
	start := len(dst)
	for {
		if i < 0 || i+1 >= len(src) {
			return nil, dst, nil, errBadKey
		}
		switch src[i+1] {
		case escTerm:
			dst = append(dst, src[:i]...)
			return dst[start:], dst, src[i+2:], nil
		case escZero:
			dst = append(dst, src[:i+1]...)
			src = src[i+2:]
			i = bytes.IndexByte(src, escByte)
		default:
			return nil, dst, nil, errBadKey
		}
	}
}

// appendTablePrefix appends the 5-byte prefix shared by a table's data keys.
func appendTablePrefix(dst []byte, id uint32) []byte {
	dst = append(dst, tagData)
	return binary.BigEndian.AppendUint32(dst, id)
}

// appendRowPrefix appends the pebble prefix (see split) of a row: table
// prefix and escaped row. All cells of the row start with it.
func appendRowPrefix(dst []byte, id uint32, row []byte) []byte {
	return appendEscaped(appendTablePrefix(dst, id), row)
}

// appendColumnPrefix appends family and escaped qualifier to a row prefix.
func appendColumnPrefix(rowPrefix []byte, family string, qualifier []byte) []byte {
	dst := append(rowPrefix, family...)
	dst = append(dst, famTerm)
	return appendEscaped(dst, qualifier)
}

// appendTimestamp appends the inverted big-endian timestamp, so newer
// versions sort first.
func appendTimestamp(dst []byte, ts int64) []byte {
	return binary.BigEndian.AppendUint64(dst, ^uint64(ts))
}

// AppendCellKey appends the pebble key of one cell version to dst.
func AppendCellKey(dst []byte, id uint32, row []byte, family string, qualifier []byte, ts int64) []byte {
	dst = appendColumnPrefix(appendRowPrefix(dst, id, row), family, qualifier)
	return appendTimestamp(dst, ts)
}

// cellKey is a decoded data key. Row and Qualifier alias the key or the
// buffer passed to parseCellKey.
type cellKey struct {
	ID        uint32
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64
	// RowPrefixLen is the length of the key's row prefix.
	RowPrefixLen int
}

// ParseCellKey decodes a key written by AppendCellKey. Escaped fields that
// need unescaping are appended to buf, which is returned grown.
func ParseCellKey(buf, key []byte) (k cellKey, newBuf []byte, err error) {
	if len(key) < headerLen+2+1+2+tsLen || key[0] != tagData {
		return k, buf, fmt.Errorf("%w: %d bytes", errBadKey, len(key))
	}
	k.ID = binary.BigEndian.Uint32(key[1:headerLen])
	var rest []byte
	k.Row, buf, rest, err = parseEscaped(buf, key[headerLen:])
	if err != nil {
		return k, buf, fmt.Errorf("row: %w", err)
	}
	k.RowPrefixLen = len(key) - len(rest)
	return parseColumn(k, buf, rest)
}

// parseColumn decodes family, qualifier and timestamp after a row prefix.
func parseColumn(k cellKey, buf, rest []byte) (cellKey, []byte, error) {
	i := bytes.IndexByte(rest, famTerm)
	if i < 0 {
		return k, buf, fmt.Errorf("family: %w", errBadKey)
	}
	k.Family = rest[:i:i]
	var err error
	k.Qualifier, buf, rest, err = parseEscaped(buf, rest[i+1:])
	if err != nil {
		return k, buf, fmt.Errorf("qualifier: %w", err)
	}
	if len(rest) != tsLen {
		return k, buf, fmt.Errorf("timestamp of %d bytes: %w", len(rest), errBadKey)
	}
	ts := ^binary.BigEndian.Uint64(rest)
	if ts > 1<<63-1 {
		return k, buf, fmt.Errorf("negative timestamp: %w", errBadKey)
	}
	k.Timestamp = int64(ts)
	return k, buf, nil
}

// split returns the length of a key's row prefix: table prefix plus escaped
// row. Keys that are not data keys, or are cut short (index separators), are
// their own prefix. Because an escaped row is never a prefix of another
// escaped row, ordering keys by (prefix, rest) bytewise equals ordering them
// bytewise, as pebble's Comparer.Split contract demands.
func split(key []byte) int {
	if len(key) <= headerLen || key[0] != tagData {
		return len(key)
	}
	i := bytes.Index(key[headerLen:], termSeq)
	if i < 0 {
		return len(key)
	}
	return headerLen + i + 2
}

var termSeq = []byte{escByte, escTerm}

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
	c.Name = "tsd.storage.rowsplit.v1"
	c.Split = split
	c.ImmediateSuccessor = immediateSuccessor
	return &c
}()

// immediateSuccessor appends the smallest prefix key after prefix key a.
// Every key that extends a row prefix has that row prefix, so the next
// prefix key after a row prefix is its bytewise successor; any other prefix
// key gains a 0x00, which cannot complete a terminator.
func immediateSuccessor(dst, a []byte) []byte {
	n := len(a)
	if n > headerLen+1 && a[0] == tagData && a[n-2] == escByte && a[n-1] == escTerm {
		dst = append(dst, a...)
		dst[len(dst)-1]++
		return dst
	}
	return append(append(dst, a...), 0)
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
