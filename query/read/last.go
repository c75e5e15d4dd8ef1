package read

import (
	"context"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// Last returns the newest point of s in [start, end] (ms, inclusive) and
// whether there is one: /api/query/last. It reads the head's newest row
// with points in the range first, then the core's rows from end's hour
// down, a Get each, and stops at the first row with a point in the range,
// at the latest at the head row's hour (where the two merge). It ignores
// s's index span: the caller bounds the range. Retention applies as in
// Read.
func (r *Reader) Last(ctx context.Context, s index.Series, start, end int64) (series.Point, bool, error) {
	start, err := r.clampStart(ctx, s.TSUID, start)
	if err != nil || start > end {
		return series.Point{}, false, err
	}
	rr := r.getRowReader()
	defer r.putRowReader(rr)
	rr.want = false
	rr.tsuid = append(rr.tsuid[:0], s.TSUID...)
	c := cursor{rr: rr, ctx: ctx, tsuid: rr.tsuid, start: start, end: end, out: rr.out,
		head: rr.lastHeadRow(rr.tsuid, start, end)}
	defer func() { rr.out = c.out[:0] }()
	stop := start - start%hourMs
	if len(c.head.rows) > 0 {
		stop = c.head.rows[0].base
	}
	for h := end - end%hourMs; h >= stop; h -= hourMs {
		if err := ctx.Err(); err != nil {
			return series.Point{}, false, err
		}
		if err := c.load(h); err != nil {
			return series.Point{}, false, err
		}
		if n := len(c.pts); n > 0 {
			return c.pts[n-1], true, nil
		}
	}
	return series.Point{}, false, nil
}
