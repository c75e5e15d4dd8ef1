package rollup

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// QualifierLen is the length of the qualifiers OpenTSDB 2.4 writes.
const QualifierLen = 3

// compactedMask marks a compacted rollup column in OpenTSDB's reader
// (RollupUtils.isCompacted); no writer produces one and tsd refuses it.
const compactedMask = 0x80

// AppendQualifier appends the 3-byte rollup qualifier
// [aggregator id][uint16(index<<4 | flags)].
func AppendQualifier(dst []byte, aggID, index int, f rowkey.Flags) ([]byte, error) {
	if aggID < 0 || aggID > 127 {
		return dst, invalidf("aggregator id %d outside 0..127", aggID)
	}
	if index < 0 || index > MaxIndex {
		return dst, invalidf("interval index %d outside 0..%d", index, MaxIndex)
	}
	return append(dst, byte(aggID), byte(index>>4), byte(index<<4)|byte(f&rowkey.FlagsMask)), nil
}

// Qualifier is a parsed rollup qualifier.
type Qualifier struct {
	// AggID is the aggregator's id, or -1 for the legacy form.
	AggID int
	// AggName is the legacy form's lower-case aggregator name, aliasing
	// the qualifier's bytes; nil in the 3-byte form.
	AggName []byte
	// Index is the interval's index in its row.
	Index int
	// Flags are the value's type and length bits.
	Flags rowkey.Flags
}

// ParseQualifier reads a rollup qualifier: the 3-byte form, or the legacy
// "<agg>:" prefix followed by a 2-byte qualifier (or a 4-byte one in the
// millisecond form, whose offset/1000 OpenTSDB reads as the index).
func ParseQualifier(q []byte) (Qualifier, error) {
	if len(q) == QualifierLen {
		if q[0]&compactedMask != 0 {
			return Qualifier{}, corruptf("qualifier %s: compacted rollup columns are not supported", hex.EncodeToString(q))
		}
		v := binary.BigEndian.Uint16(q[1:])
		return Qualifier{AggID: int(q[0]), Index: int(v >> 4), Flags: rowkey.Flags(v) & rowkey.FlagsMask}, nil
	}
	colon := legacyPrefix(q)
	if colon < 0 {
		return Qualifier{}, corruptf("qualifier %s is not a rollup qualifier", hex.EncodeToString(q))
	}
	rest := q[colon+1:]
	out := Qualifier{AggID: -1, AggName: q[:colon]}
	switch {
	case len(rest) == 2 && rest[0]&0xF0 != 0xF0:
		v := binary.BigEndian.Uint16(rest)
		out.Index, out.Flags = int(v>>4), rowkey.Flags(v)&rowkey.FlagsMask
	case len(rest) == 4 && rest[0]&0xF0 == 0xF0:
		v := binary.BigEndian.Uint32(rest)
		out.Index, out.Flags = int((v&0x0FFFFFC0)>>6/1000), rowkey.Flags(v)&rowkey.FlagsMask
	default:
		return Qualifier{}, corruptf("legacy rollup qualifier %s: bad offset", hex.EncodeToString(q))
	}
	return out, nil
}

// legacyPrefix returns the position of the ':' ending a legacy "<agg>:"
// prefix (lower-case letters and digits, starting with a letter), or -1.
func legacyPrefix(q []byte) int {
	for i, c := range q {
		switch {
		case c == ':' && i > 0:
			return i
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9' && i > 0:
		default:
			return -1
		}
	}
	return -1
}

// AppendLegacyQualifier appends the legacy "<agg>:" qualifier of a
// second-precision index (only to test readers; tsd writes the 3-byte
// form).
func AppendLegacyQualifier(dst []byte, agg string, index int, f rowkey.Flags) []byte {
	dst = append(dst, agg...)
	dst = append(dst, ':')
	return binary.BigEndian.AppendUint16(dst, uint16(index<<4)|uint16(f&rowkey.FlagsMask))
}

// ParseColumn decodes one OpenTSDB rollup column of the row starting at
// base: its qualifier and its value as a point at the interval's start.
// The value takes OpenTSDB's single-cell repairs (rowkey.FixSingle).
func ParseColumn(iv *Interval, base int64, q, v []byte) (Qualifier, series.Point, error) {
	pq, err := ParseQualifier(q)
	if err != nil {
		return pq, series.Point{}, err
	}
	if pq.Index >= iv.Count {
		return pq, series.Point{}, corruptf("qualifier %s: index %d beyond the %d intervals of %s", hex.EncodeToString(q), pq.Index, iv.Count, iv.Name)
	}
	f, val, err := rowkey.FixSingle(pq.Flags, v)
	if err != nil {
		return pq, series.Point{}, corruptf("qualifier %s: %v", hex.EncodeToString(q), err)
	}
	p, err := rowkey.DecodeValue(iv.CellStart(base, pq.Index), f, val)
	if err != nil {
		return pq, series.Point{}, corruptf("qualifier %s: %v", hex.EncodeToString(q), err)
	}
	pq.Flags = f
	return pq, p, nil
}
