package rowkey

import (
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/tsd-db/tsd/series"
)

// ValueFlags returns the qualifier flags OpenTSDB writes for p: integers on
// the fewest of 1, 2, 4 or 8 bytes; Float32 on 4 bytes; Float64 on 8.
func ValueFlags(p series.Point) Flags {
	switch p.Kind {
	case series.Float32:
		return FlagFloat | 3
	case series.Float64:
		return FlagFloat | 7
	}
	v := int64(p.Bits)
	switch {
	case v == int64(int8(v)):
		return 0
	case v == int64(int16(v)):
		return 1
	case v == int64(int32(v)):
		return 3
	}
	return 7
}

// AppendValue appends p's value as ValueFlags(p) announces, big-endian.
func AppendValue(dst []byte, p series.Point) []byte {
	switch f := ValueFlags(p); f {
	case 0:
		return append(dst, byte(p.Bits))
	case 1:
		return binary.BigEndian.AppendUint16(dst, uint16(p.Bits))
	case 3:
		return binary.BigEndian.AppendUint32(dst, uint32(p.Bits))
	case FlagFloat | 3:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(math.Float64frombits(p.Bits))))
	}
	return binary.BigEndian.AppendUint64(dst, p.Bits)
}

// DecodeValue decodes a value whose length must be what f announces:
// integers on 1, 2, 4 or 8 bytes, floats on 4 or 8.
func DecodeValue(t int64, f Flags, v []byte) (series.Point, error) {
	if len(v) != f.ValueLen() {
		return series.Point{}, corruptf("value %s: %d bytes, flags 0x%x announce %d", hex.EncodeToString(v), len(v), uint8(f), f.ValueLen())
	}
	if f.IsFloat() {
		switch len(v) {
		case 4:
			return series.Float32Point(t, math.Float32frombits(binary.BigEndian.Uint32(v))), nil
		case 8:
			return series.Point{T: t, Bits: binary.BigEndian.Uint64(v), Kind: series.Float64}, nil
		}
		return series.Point{}, corruptf("floating point value not on 8 or 4 bytes but on %d", len(v))
	}
	switch len(v) {
	case 1:
		return series.IntPoint(t, int64(int8(v[0]))), nil
	case 2:
		return series.IntPoint(t, int64(int16(binary.BigEndian.Uint16(v)))), nil
	case 4:
		return series.IntPoint(t, int64(int32(binary.BigEndian.Uint32(v)))), nil
	case 8:
		return series.IntPoint(t, int64(binary.BigEndian.Uint64(v))), nil
	}
	return series.Point{}, corruptf("integer value occupies %d bytes", len(v))
}

// FixSingle applies OpenTSDB's repairs to a single 2-byte-qualifier cell
// (Internal.fixFloatingPointValue, then fixQualifierFlags): a float that
// claims 4 bytes but sits on 8 with four leading zero bytes keeps its last
// 4; then the length bits are rewritten to the value's real length.
func FixSingle(f Flags, v []byte) (Flags, []byte, error) {
	if f.IsFloat() && f&LengthMask == 3 && len(v) == 8 {
		if v[0]|v[1]|v[2]|v[3] != 0 {
			return f, v, corruptf("Corrupted floating point value: %s flags=0x%x -- first 4 bytes are expected to be zeros", hex.EncodeToString(v), uint8(f))
		}
		v = v[4:]
	}
	if len(v) < 1 || len(v) > 8 {
		return f, v, corruptf("value of %d bytes in a single cell", len(v))
	}
	return f&FlagFloat | Flags(len(v)-1), v, nil
}

// ParseSingle decodes a single-point cell of a row whose base time is
// baseSec. 2-byte (second) qualifiers get FixSingle's repairs; 4-byte
// millisecond cells postdate the bug and are read as they are.
func ParseSingle(baseSec int64, qual, v []byte) (series.Point, error) {
	q, rest, err := ParseQualifier(qual)
	if err != nil {
		return series.Point{}, err
	}
	if len(rest) != 0 {
		return series.Point{}, corruptf("qualifier %s is not a single data point", hex.EncodeToString(qual))
	}
	if !q.Ms {
		if q.Flags, v, err = FixSingle(q.Flags, v); err != nil {
			return series.Point{}, err
		}
	}
	p, err := DecodeValue(baseSec*1000+q.Offset, q.Flags, v)
	markMs(&p, q)
	return p, err
}
