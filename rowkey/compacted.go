package rowkey

import (
	"github.com/tsd-db/tsd/series"
)

// Meta byte values that end a compacted column of two or more points.
const (
	metaSame  = 0x00 // all second or all millisecond qualifiers
	metaMixed = 0x01 // OpenTSDB's MS_MIXED_COMPACT
)

// CompactedWriter builds one OpenTSDB compacted column: the points'
// qualifiers concatenated in time order, their values concatenated, and,
// with two or more points, a trailing meta byte (0x01 when second and
// millisecond qualifiers mix, else 0x00). One point is a plain single
// cell. The zero value is ready; Reset reuses the caller's buffers.
type CompactedWriter struct {
	q, v       []byte
	n          int
	last       int64
	sec, milli bool
}

// Reset starts a new column that appends to q and v.
func (w *CompactedWriter) Reset(q, v []byte) {
	*w = CompactedWriter{q: q, v: v, last: -1}
}

// Add appends a point given as its qualifier and already encoded value
// (a compactor keeps each cell's own qualifier form). Offsets must ascend
// strictly and the value length must match the flags.
func (w *CompactedWriter) Add(q Qualifier, value []byte) error {
	if q.Offset <= w.last && w.n > 0 {
		return invalidf("compacted column: offset %d ms not after %d", q.Offset, w.last)
	}
	if len(value) != q.Flags.ValueLen() {
		return invalidf("compacted column: %d-byte value for flags 0x%x", len(value), uint8(q.Flags))
	}
	var err error
	if w.q, err = AppendQualifier(w.q, q); err != nil {
		return err
	}
	w.v = append(w.v, value...)
	w.n, w.last = w.n+1, q.Offset
	w.milli, w.sec = w.milli || q.Ms, w.sec || !q.Ms
	return nil
}

// AddPoint appends p, a point offsetMs into the row, with PointQualifier's
// form and ValueFlags' width.
func (w *CompactedWriter) AddPoint(offsetMs int64, p series.Point) error {
	if offsetMs <= w.last && w.n > 0 {
		return invalidf("compacted column: offset %d ms not after %d", offsetMs, w.last)
	}
	q := PointQualifier(offsetMs, p)
	var err error
	if w.q, err = AppendQualifier(w.q, q); err != nil {
		return err
	}
	w.v = AppendValue(w.v, p)
	w.n, w.last = w.n+1, offsetMs
	w.milli, w.sec = w.milli || q.Ms, w.sec || !q.Ms
	return nil
}

// PointQualifier is the qualifier of p, offsetMs into its row: the
// millisecond form off whole seconds or for a point marked Ms, else the
// second form.
func PointQualifier(offsetMs int64, p series.Point) Qualifier {
	q := NewQualifier(offsetMs, ValueFlags(p))
	q.Ms = q.Ms || p.Ms
	return q
}

// markMs sets p.Ms for a point read from a millisecond qualifier on a
// whole second, so that rewriting it keeps its qualifier.
func markMs(p *series.Point, q Qualifier) {
	p.Ms = q.Ms && q.Offset%1000 == 0
}

// Len returns the number of points added.
func (w *CompactedWriter) Len() int { return w.n }

// Finish returns the column's qualifier and value.
func (w *CompactedWriter) Finish() (q, v []byte) {
	if w.n >= 2 {
		meta := byte(metaSame)
		if w.sec && w.milli {
			meta = metaMixed
		}
		w.v = append(w.v, meta)
	}
	return w.q, w.v
}

// AppendCompacted appends to q and v the compacted column of pts, points
// of the row whose base time is baseSec, sorted by time without
// duplicates.
func AppendCompacted(q, v []byte, baseSec int64, pts []series.Point) ([]byte, []byte, error) {
	var w CompactedWriter
	w.Reset(q, v)
	for _, p := range pts {
		if err := w.AddPoint(p.T-baseSec*1000, p); err != nil {
			return q, v, err
		}
	}
	q, v = w.Finish()
	return q, v, nil
}

// CompactedIter walks the points of an OpenTSDB compacted column. Errors
// are sticky; the last point's check that the value was consumed to its
// meta byte runs when Next first returns false.
type CompactedIter struct {
	q, v   []byte
	vlen   int
	cur    Qualifier
	curVal []byte
	err    error
}

// Reset starts iterating the column (qualifier, value).
func (it *CompactedIter) Reset(qual, value []byte) {
	*it = CompactedIter{q: qual, v: value, vlen: len(value)}
}

// Next advances to the next point.
func (it *CompactedIter) Next() bool {
	if it.err != nil {
		return false
	}
	if len(it.q) == 0 {
		it.checkEnd()
		return false
	}
	q, rest, err := ParseQualifier(it.q)
	if err != nil {
		it.err = err
		return false
	}
	n := q.Flags.ValueLen()
	if n > len(it.v) {
		it.err = it.corrupted(it.vlen - len(it.v) + n)
		return false
	}
	it.cur, it.curVal, it.q, it.v = q, it.v[:n], rest, it.v[n:]
	return true
}

// checkEnd requires exactly the meta byte (OpenTSDB's rule: consumed ==
// len(value)-1).
func (it *CompactedIter) checkEnd() {
	if len(it.v) != 1 {
		it.err = it.corrupted(it.vlen - len(it.v))
	}
}

func (it *CompactedIter) corrupted(consumed int) error {
	return corruptf("Corrupted value: couldn't break down into individual values (consumed %d bytes, but was expecting to consume %d)", consumed, it.vlen-1)
}

// Qualifier returns the current point's qualifier.
func (it *CompactedIter) Qualifier() Qualifier { return it.cur }

// Value returns the current point's value bytes, aliasing the column.
func (it *CompactedIter) Value() []byte { return it.curVal }

// Err returns the error that stopped the iteration.
func (it *CompactedIter) Err() error { return it.err }

// ParseCompacted appends the points of a compacted column of the row at
// baseSec to dst, in column order. On error dst keeps the points decoded
// before it.
func ParseCompacted(dst []series.Point, baseSec int64, qual, value []byte) ([]series.Point, error) {
	var it CompactedIter
	it.Reset(qual, value)
	for it.Next() {
		p, err := DecodeValue(baseSec*1000+it.cur.Offset, it.cur.Flags, it.curVal)
		if err != nil {
			return dst, err
		}
		markMs(&p, it.cur)
		dst = append(dst, p)
	}
	return dst, it.Err()
}
