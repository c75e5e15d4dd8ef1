package read

import (
	"context"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// Func receives one series' points, sorted by time, one per timestamp, and
// with Selection.Notes its annotations in the range, sorted by time; at
// least one of them is not empty. It owns both slices.
type Func func(s index.Series, pts []series.Point, notes []Note) error

// Read calls fn for every selected series that has points in the range,
// each series whole, in the selection's order, on the caller's goroutine
// once the read is done. The first error (fn's, the store's, a
// *LimitError or the context's) stops the read and is returned.
func (r *Reader) Read(ctx context.Context, sel Selection, fn Func) error {
	st := r.streams.Get().(*stream)
	defer r.putStream(st)
	st.read.lastBase = rowkey.BaseTime(sel.End) * 1000
	st.read.pts = append(st.read.pts[:0], make([][]series.Point, len(sel.Series))...)
	st.read.notes = append(st.read.notes[:0], make([][]Note, len(sel.Series))...)
	if err := st.push(ctx, &sel, &st.read); err != nil {
		return err
	}
	for i, pts := range st.read.pts {
		if notes := st.read.notes[i]; len(pts)+len(notes) > 0 {
			if err := fn(sel.Series[i], pts, notes); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSink is Read's rowSink: it gathers each series' rows into a slice
// of its own.
type readSink struct {
	pts      [][]series.Point // per series
	notes    [][]Note         // per series
	lastBase int64            // the range's last row (ms)
}

// maxPresize bounds the points a series' slice is sized for up front.
const maxPresize = 1 << 16

func (s *readSink) row(i int, pts []series.Point, _ *cacheEntry) error {
	p := s.pts[i]
	if p == nil {
		// Rows of a series are alike: room for the rest of the range at
		// this row's density, instead of doubling through it.
		more := len(pts) * int((s.lastBase-(pts[0].T-pts[0].T%hourMs))/hourMs)
		p = make([]series.Point, 0, len(pts)+min(more, maxPresize))
	}
	s.pts[i] = append(p, pts...)
	return nil
}

func (s *readSink) end(i int, notes []Note) error {
	s.notes[i] = notes
	return nil
}
