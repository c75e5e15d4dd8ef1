package rowkey

import (
	"encoding/binary"
	"encoding/hex"
)

const (
	annotationPrefix = 0x01
	histogramPrefix  = 0x06
)

// AppendAnnotationQualifier appends the qualifier of an annotation
// offsetMs into its row: 01 + 2-byte seconds when the offset is whole
// seconds (OpenTSDB folds such times to seconds), else 01 + 4-byte
// milliseconds, neither with flags.
func AppendAnnotationQualifier(dst []byte, offsetMs int64) ([]byte, error) {
	return appendPrefixedOffset(dst, annotationPrefix, offsetMs)
}

// ParseAnnotationQualifier returns an annotation qualifier's offset in
// milliseconds.
func ParseAnnotationQualifier(q []byte) (int64, error) {
	return parsePrefixedOffset(q, annotationPrefix)
}

// AppendHistogramQualifier appends an OpenTSDB 2.4 histogram point
// qualifier: 06 + 2-byte seconds or 06 + 4-byte raw milliseconds.
func AppendHistogramQualifier(dst []byte, offsetMs int64) ([]byte, error) {
	return appendPrefixedOffset(dst, histogramPrefix, offsetMs)
}

// ParseHistogramQualifier returns a histogram qualifier's offset in ms.
func ParseHistogramQualifier(q []byte) (int64, error) {
	return parsePrefixedOffset(q, histogramPrefix)
}

func appendPrefixedOffset(dst []byte, prefix byte, offsetMs int64) ([]byte, error) {
	if offsetMs < 0 || offsetMs >= RowSpanMs {
		return dst, invalidf("offset %d ms outside its row", offsetMs)
	}
	dst = append(dst, prefix)
	if offsetMs%1000 == 0 {
		return binary.BigEndian.AppendUint16(dst, uint16(offsetMs/1000)), nil
	}
	return binary.BigEndian.AppendUint32(dst, uint32(offsetMs)), nil
}

func parsePrefixedOffset(q []byte, prefix byte) (int64, error) {
	var off int64
	switch {
	case len(q) == 3 && q[0] == prefix:
		off = int64(binary.BigEndian.Uint16(q[1:])) * 1000
	case len(q) == 5 && q[0] == prefix:
		off = int64(binary.BigEndian.Uint32(q[1:]))
	default:
		return 0, corruptf("qualifier %s is not %02x + 2 or 4 bytes", hex.EncodeToString(q), prefix)
	}
	if off >= RowSpanMs {
		return 0, corruptf("qualifier %s: offset %d ms beyond the hour", hex.EncodeToString(q), off)
	}
	return off, nil
}
