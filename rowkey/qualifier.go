package rowkey

import (
	"encoding/binary"
	"encoding/hex"
)

// Flags are the low 4 bits of a data point qualifier: the float bit and
// the value length minus one.
type Flags uint8

const (
	// FlagFloat marks an IEEE-754 value.
	FlagFloat Flags = 0x8
	// LengthMask selects the value length minus one.
	LengthMask Flags = 0x7
	// FlagsMask selects every flag bit.
	FlagsMask Flags = 0xF

	msByteFlag = 0xF0
	msFlag     = 0xF0000000
)

// IsFloat reports the float bit.
func (f Flags) IsFloat() bool { return f&FlagFloat != 0 }

// ValueLen returns the value length the flags announce (1..8).
func (f Flags) ValueLen() int { return int(f&LengthMask) + 1 }

// Qualifier is one OpenTSDB data point qualifier.
type Qualifier struct {
	// Offset is the point's time from the row base, in milliseconds.
	Offset int64
	// Ms selects the 4-byte millisecond form; otherwise the 2-byte second
	// form, whose Offset is a whole number of seconds.
	Ms bool
	// Flags are the type and length bits.
	Flags Flags
}

// NewQualifier returns the qualifier of a point offsetMs into its row: the
// 2-byte second form when the offset is whole seconds, else the 4-byte
// millisecond form. (OpenTSDB picks the form by the precision of the input
// timestamp; a writer that knows it may set Ms itself.)
func NewQualifier(offsetMs int64, f Flags) Qualifier {
	return Qualifier{Offset: offsetMs, Ms: offsetMs%1000 != 0, Flags: f & FlagsMask}
}

// Len returns the encoded length, 2 or 4.
func (q Qualifier) Len() int {
	if q.Ms {
		return 4
	}
	return 2
}

// AppendQualifier appends q: uint16(delta_s<<4 | flags) or
// uint32(0xF0000000 | delta_ms<<6 | flags), big-endian.
func AppendQualifier(dst []byte, q Qualifier) ([]byte, error) {
	if q.Offset < 0 || q.Offset >= RowSpanMs || (!q.Ms && q.Offset%1000 != 0) {
		return dst, invalidf("qualifier offset %d ms (ms form %v) outside its row", q.Offset, q.Ms)
	}
	f := uint32(q.Flags & FlagsMask)
	if q.Ms {
		return binary.BigEndian.AppendUint32(dst, msFlag|uint32(q.Offset)<<6|f), nil
	}
	return binary.BigEndian.AppendUint16(dst, uint16(q.Offset/1000)<<4|uint16(f)), nil
}

// ParseQualifier reads one 2- or 4-byte qualifier from the front of src
// (a single cell's qualifier or a step through a compacted one).
func ParseQualifier(src []byte) (Qualifier, []byte, error) {
	if len(src) < 2 {
		return Qualifier{}, src, corruptf("qualifier %s: too short", hex.EncodeToString(src))
	}
	if src[0]&msByteFlag != msByteFlag {
		v := binary.BigEndian.Uint16(src)
		q := Qualifier{Offset: int64(v>>4) * 1000, Flags: Flags(v) & FlagsMask}
		if q.Offset >= RowSpanMs {
			return Qualifier{}, src, corruptf("qualifier %04x: offset %d s beyond the hour", v, v>>4)
		}
		return q, src[2:], nil
	}
	if len(src) < 4 {
		return Qualifier{}, src, corruptf("qualifier %s: millisecond flag but only %d bytes", hex.EncodeToString(src), len(src))
	}
	v := binary.BigEndian.Uint32(src)
	q := Qualifier{Offset: int64(v&0x0FFFFFC0) >> 6, Ms: true, Flags: Flags(v) & FlagsMask}
	if q.Offset >= RowSpanMs {
		return Qualifier{}, src, corruptf("qualifier %08x: offset %d ms beyond the hour", v, q.Offset)
	}
	return q, src[4:], nil
}

// ColumnKind says what a column of a data row holds, from its qualifier.
type ColumnKind uint8

const (
	// ColumnOther is not a data point column tsd reads (a rollup column or
	// an unknown odd-length qualifier); readers skip it.
	ColumnOther ColumnKind = iota
	// ColumnSingle is one point: a 2-byte qualifier, or a 4-byte one with
	// the millisecond flag.
	ColumnSingle
	// ColumnCompacted is an OpenTSDB compacted column: any other even
	// length.
	ColumnCompacted
	// ColumnAppends is the appends column 050000.
	ColumnAppends
	// ColumnAnnotation is an annotation: 01 + 2- or 4-byte offset.
	ColumnAnnotation
	// ColumnHistogram is an OpenTSDB 2.4 histogram point: 06 + offset.
	ColumnHistogram
	// ColumnDense is a tsd dense column: odd length, prefix 0x80..0xEF.
	ColumnDense
)

// Classify returns the kind of column q names. Even lengths are data
// points as OpenTSDB reads them; odd lengths are everything else.
func Classify(q []byte) ColumnKind {
	n := len(q)
	switch {
	case n == 0:
		return ColumnOther
	case n%2 == 0:
		if n == 2 || (n == 4 && q[0]&msByteFlag == msByteFlag) {
			return ColumnSingle
		}
		return ColumnCompacted
	case q[0] >= DensePrefix && q[0] <= denseLastPrefix:
		return ColumnDense
	case n == len(AppendsQualifier) && q[0] == appendsPrefix:
		return ColumnAppends
	case q[0] == annotationPrefix && (n == 3 || n == 5):
		return ColumnAnnotation
	case q[0] == histogramPrefix && (n == 3 || n == 5):
		return ColumnHistogram
	}
	return ColumnOther
}
