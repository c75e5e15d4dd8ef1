package read

import (
	"context"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// Last returns the newest point of s in [start, end] (ms, inclusive) and
// whether there is one: /api/query/last. It reads the head's points of the
// range first, then the store's hour rows from end's hour down, one Get
// each, and stops at the first row holding a point in the range or at the
// hour of the head's newest point, whichever comes first; a point in both
// keeps the head's value. It ignores s's index span: the caller bounds the
// range. Retention applies as in Read.
func (r *Reader) Last(ctx context.Context, s index.Series, start, end int64) (series.Point, bool, error) {
	start, err := r.clampStart(ctx, s.TSUID, start)
	if err != nil || start > end {
		return series.Point{}, false, err
	}
	rr := r.getRowReader()
	defer r.putRowReader(rr)
	rr.want = false
	tsuid := []byte(s.TSUID)
	head := r.headPoints(rr.head[:0], tsuid, start, end)
	rr.head = head[:0]
	var newest series.Point
	found := len(head) > 0
	stop := start - start%hourMs
	if found {
		newest = head[len(head)-1]
		stop = newest.T - newest.T%hourMs
	}
	for h := end - end%hourMs; h >= stop; h -= hourMs {
		if err := ctx.Err(); err != nil {
			return series.Point{}, false, err
		}
		pts, err := rr.getRow(ctx, rr.store[:0], tsuid, h, nil)
		rr.store = pts[:0]
		if err != nil {
			return series.Point{}, false, err
		}
		if pts = clip(pts, start, end); len(pts) > 0 {
			if p := pts[len(pts)-1]; !found || p.T > newest.T {
				return p, true, nil
			}
			break
		}
	}
	return newest, found, nil
}
