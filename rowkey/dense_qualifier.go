package rowkey

import (
	"encoding/binary"
	"encoding/hex"
)

const (
	// DensePrefix is the first byte of a dense column qualifier (format
	// version 1). 0x81..0xEF are reserved for later versions.
	DensePrefix = 0x80
	// denseLastPrefix is the last prefix byte of the dense range.
	denseLastPrefix = 0xEF
	// DenseQualifierLen is the length of a dense qualifier: prefix, writer
	// id and flush sequence number, odd so that OpenTSDB skips it.
	DenseQualifierLen = 9
)

// AppendDenseQualifier appends the qualifier of a dense column written by
// writer as its flush number seq: 80 | writer (4B) | seq (4B), big-endian.
// Writers own distinct ids and never reuse a seq, so two flushes never
// share a qualifier.
func AppendDenseQualifier(dst []byte, writer, seq uint32) []byte {
	dst = append(dst, DensePrefix)
	dst = binary.BigEndian.AppendUint32(dst, writer)
	return binary.BigEndian.AppendUint32(dst, seq)
}

// ParseDenseQualifier returns the writer id and flush number of a dense
// column qualifier.
func ParseDenseQualifier(q []byte) (writer, seq uint32, err error) {
	if len(q) != DenseQualifierLen || q[0] != DensePrefix {
		return 0, 0, corruptf("dense qualifier %s: want 80 + 8 bytes (a newer tsd may have written it)", hex.EncodeToString(q))
	}
	return binary.BigEndian.Uint32(q[1:]), binary.BigEndian.Uint32(q[5:]), nil
}
