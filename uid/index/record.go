package index

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// Kinds of log records (the first byte of a record).
const (
	recNew   = 'N' // series created or adopted: ids, spans and TSUIDs
	recHours = 'H' // spans extended: ids and spans
	recVoid  = 'V' // sequence numbers that will never hold a record
)

// maxItemsPerRecord bounds a record's size (about 40 KiB for typical
// TSUIDs) so a Bigtable cell and a scan chunk stay small.
const maxItemsPerRecord = 1024

// item is one series in a record. tsuid is set in recNew records only and
// aliases the parsed bytes.
type item struct {
	id    uint32
	sp    span
	tsuid []byte
}

// record is a parsed log record.
type record struct {
	kind  byte
	items []item
	// voidLast is, in a recVoid record at sequence s, the last sequence of
	// the voided range [s, voidLast].
	voidLast uint64
}

var errRecord = errors.New("bad log record")

// appendNewRecord encodes: 'N' uvarint(n) n×(id u32, first u32, last u32,
// uvarint(len) TSUID).
func appendNewRecord(dst []byte, items []item) []byte {
	dst = binary.AppendUvarint(append(dst, recNew), uint64(len(items)))
	for _, it := range items {
		dst = appendItemHead(dst, it)
		dst = binary.AppendUvarint(dst, uint64(len(it.tsuid)))
		dst = append(dst, it.tsuid...)
	}
	return dst
}

// appendHoursRecord encodes: 'H' uvarint(n) n×(id u32, first u32, last u32).
func appendHoursRecord(dst []byte, items []item) []byte {
	dst = binary.AppendUvarint(append(dst, recHours), uint64(len(items)))
	for _, it := range items {
		dst = appendItemHead(dst, it)
	}
	return dst
}

// appendVoidRecord encodes: 'V' last u64.
func appendVoidRecord(dst []byte, last uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, recVoid), last)
}

func appendItemHead(dst []byte, it item) []byte {
	dst = binary.BigEndian.AppendUint32(dst, it.id)
	dst = binary.BigEndian.AppendUint32(dst, it.sp.first)
	return binary.BigEndian.AppendUint32(dst, it.sp.last)
}

// parseRecord decodes src, appending its items to dst[:0]. TSUIDs alias src.
func parseRecord(src []byte, dst []item) (record, error) {
	if len(src) == 0 {
		return record{}, fmt.Errorf("%w: empty", errRecord)
	}
	switch src[0] {
	case recVoid:
		if len(src) != 9 {
			return record{}, fmt.Errorf("%w: void record of %d bytes, want 9", errRecord, len(src))
		}
		return record{kind: recVoid, voidLast: binary.BigEndian.Uint64(src[1:])}, nil
	case recNew, recHours:
		items, err := parseItems(src[1:], dst[:0], src[0] == recNew)
		return record{kind: src[0], items: items}, err
	}
	return record{}, fmt.Errorf("%w: unknown kind %#x", errRecord, src[0])
}

func parseItems(src []byte, dst []item, withTSUID bool) ([]item, error) {
	n, k := uvarint(src)
	if k <= 0 || n > uint64(len(src)) {
		return dst, fmt.Errorf("%w: bad item count", errRecord)
	}
	src = src[k:]
	for i := uint64(0); i < n; i++ {
		var it item
		var err error
		if it, src, err = parseItem(src, withTSUID); err != nil {
			return dst, fmt.Errorf("item %d: %w", i, err)
		}
		dst = append(dst, it)
	}
	if len(src) != 0 {
		return dst, fmt.Errorf("%w: %d trailing bytes", errRecord, len(src))
	}
	return dst, nil
}

func parseItem(src []byte, withTSUID bool) (item, []byte, error) {
	if len(src) < 12 {
		return item{}, src, fmt.Errorf("%w: truncated", errRecord)
	}
	it := item{id: binary.BigEndian.Uint32(src), sp: span{binary.BigEndian.Uint32(src[4:]), binary.BigEndian.Uint32(src[8:])}}
	src = src[12:]
	if !withTSUID {
		return it, src, nil
	}
	n, k := uvarint(src)
	if k <= 0 || n > storage.MaxRowKeySize || n > uint64(len(src)-k) {
		return item{}, src, fmt.Errorf("%w: bad tsuid length", errRecord)
	}
	it.tsuid = src[k : k+int(n) : k+int(n)]
	return it, src[k+int(n):], nil
}

// uvarint is binary.Uvarint refusing non-minimal encodings (k = 0), so
// that every record has one encoding.
func uvarint(src []byte) (uint64, int) {
	n, k := binary.Uvarint(src)
	if k > 1 && src[k-1] == 0 {
		return 0, 0
	}
	return n, k
}
