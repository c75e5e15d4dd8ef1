package wal

import (
	"encoding/binary"
	"fmt"
)

// AppendDeleteRange appends the head of a delete record payload: the
// inclusive time range in milliseconds. Follow it with AppendDeleteKey for
// each series.
func AppendDeleteRange(dst []byte, mint, maxt int64) []byte {
	dst = binary.AppendVarint(dst, mint)
	return binary.AppendVarint(dst, maxt)
}

// AppendDeleteKey appends one series key to a delete record payload.
func AppendDeleteKey(dst []byte, key []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// DeleteDecoder walks a delete record payload. Errors are sticky.
type DeleteDecoder struct {
	b          []byte
	mint, maxt int64
	err        error
}

// Reset starts decoding payload b and reads its time range.
func (d *DeleteDecoder) Reset(b []byte) {
	*d = DeleteDecoder{}
	mint, n := binary.Varint(b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: delete record: bad start time", ErrCorruptRecord)
		return
	}
	maxt, m := binary.Varint(b[n:])
	if m <= 0 {
		d.err = fmt.Errorf("%w: delete record: bad end time", ErrCorruptRecord)
		return
	}
	d.b, d.mint, d.maxt = b[n+m:], mint, maxt
}

// Range returns the record's inclusive time range in milliseconds.
func (d *DeleteDecoder) Range() (mint, maxt int64) { return d.mint, d.maxt }

// Next returns the next series key; it aliases the payload.
func (d *DeleteDecoder) Next() (key []byte, ok bool) {
	if len(d.b) == 0 || d.err != nil {
		return nil, false
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || l > uint64(len(d.b)-n) {
		d.err = fmt.Errorf("%w: delete record: bad series key length", ErrCorruptRecord)
		return nil, false
	}
	key, d.b = d.b[n:n+int(l)], d.b[n+int(l):]
	return key, true
}

// Err returns the error that stopped Reset or Next.
func (d *DeleteDecoder) Err() error { return d.err }
