package rollup

import (
	"encoding/binary"

	"github.com/tsd-db/tsd/rowkey"
)

// AppendColumn appends to q and v the OpenTSDB column of aggregate a of
// cell c in iv's row starting at base: the 3-byte qualifier with id
// ids[a] and the value as OpenTSDB encodes a raw point of the same type
// (integers on the fewest bytes, Float32 on 4, Float64 on 8). It returns
// q and v unchanged and ok false when ids maps no id to a.
func AppendColumn(q, v []byte, ids *AggIDs, a Agg, iv *Interval, base int64, c *Cell) (qo, vo []byte, ok bool, err error) {
	id := ids[a]
	if id < 0 {
		return q, v, false, nil
	}
	idx := iv.Index(base, floorDiv(c.T, 1000))
	if idx < 0 || idx >= iv.Count || iv.CellStart(base, idx) != c.T {
		return q, v, false, invalidf("cell at %d ms is not a cell of the %s row at %d", c.T, iv.Name, base)
	}
	p := c.Value(a)
	qo, err = AppendQualifier(q, id, idx, rowkey.ValueFlags(p))
	if err != nil {
		return q, v, false, err
	}
	return qo, rowkey.AppendValue(v, p), true, nil
}

// SetBaseTime overwrites the base time of a row key laid out by l (a raw
// key, base on the hour) with base, giving the key of the rollup row that
// holds the same series. The salt does not cover the time, so it stays.
func SetBaseTime(l *rowkey.Layout, key []byte, base int64) {
	off := l.Salt.Width() + l.Widths.Metric
	binary.BigEndian.PutUint32(key[off:off+rowkey.TimestampBytes], uint32(base))
}
