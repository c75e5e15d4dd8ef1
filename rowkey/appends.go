package rowkey

import (
	"slices"

	"github.com/tsd-db/tsd/series"
)

const appendsPrefix = 0x05

// AppendsQualifier is the qualifier of OpenTSDB's appends column.
const AppendsQualifier = "\x05\x00\x00"

// AppendAppendsPoint appends one (qualifier, value) pair of the appends
// column for p, a point offsetMs into its row.
func AppendAppendsPoint(dst []byte, offsetMs int64, p series.Point) ([]byte, error) {
	dst, err := AppendQualifier(dst, PointQualifier(offsetMs, p))
	if err != nil {
		return dst, err
	}
	return AppendValue(dst, p), nil
}

// ParseAppends appends the points of an appends column value of the row
// at baseSec to dst, sorted by time, the last of duplicate offsets
// winning (OpenTSDB's TreeMap put). On error dst keeps the points decoded
// before it, unsorted.
func ParseAppends(dst []series.Point, baseSec int64, value []byte) ([]series.Point, error) {
	start, total := len(dst), len(value)
	for len(value) > 0 {
		q, rest, err := ParseQualifier(value)
		if err != nil {
			return dst, corruptf("Corrupted value: couldn't break down into individual values (consumed %d bytes, but was expecting to consume %d): %v", total-len(value), total, err)
		}
		n := q.Flags.ValueLen()
		if n > len(rest) {
			return dst, corruptf("Corrupted value: couldn't break down into individual values (consumed %d bytes, but was expecting to consume %d)", total-len(rest)+n, total)
		}
		p, err := DecodeValue(baseSec*1000+q.Offset, q.Flags, rest[:n])
		if err != nil {
			return dst, err
		}
		markMs(&p, q)
		dst, value = append(dst, p), rest[n:]
	}
	return dst[:start+sortLastWins(dst[start:])], nil
}

// sortLastWins sorts pts by time keeping, for equal times, only the one
// that came last, and returns the new length.
func sortLastWins(pts []series.Point) int {
	if !slices.IsSortedFunc(pts, cmpT) {
		slices.SortStableFunc(pts, cmpT)
	}
	n := 0
	for i := range pts {
		if i+1 < len(pts) && pts[i+1].T == pts[i].T {
			continue
		}
		pts[n] = pts[i]
		n++
	}
	return n
}

func cmpT(a, b series.Point) int {
	switch {
	case a.T < b.T:
		return -1
	case a.T > b.T:
		return 1
	}
	return 0
}
