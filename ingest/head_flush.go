package ingest

import (
	"fmt"
	"math"
	"slices"

	"github.com/tsd-db/tsd/internal/series"
)

// reinstate puts back a row whose flush failed. If points arrived for its
// hour meanwhile, the two merge and the newer points win ties.
func (h *Head) reinstate(s *memSeries, old *openRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The flusher releases a row's memory only once it is written, so the
	// old row still counts.
	i, found := s.findRow(old.base)
	if !found {
		s.rows = slices.Insert(s.rows, i, *old)
		return
	}
	r := &s.rows[i]
	before := r.bytes()
	buf := getPoints()
	merged := mergeNewerWins((*buf)[:0], old, r)
	r.chunk.reset()
	for _, p := range merged {
		r.chunk.append(r.base, p)
	}
	r.ooo = r.ooo[:0]
	r.minSeg = min(r.minSeg, old.minSeg)
	*buf = merged
	putPoints(buf)
	h.mem.Add(r.bytes() - before - old.bytes())
}

// mergeNewerWins appends the points of older and newer, one per timestamp,
// newer's winning.
func mergeNewerWins(dst []series.Point, older, newer *openRow) []series.Point {
	dst = older.appendPoints(dst, math.MinInt64, math.MaxInt64)
	n := len(dst)
	dst = newer.appendPoints(dst, math.MinInt64, math.MaxInt64)
	a, b := dst[:n:n], dst[n:]
	out := make([]series.Point, 0, len(dst))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].T < b[0].T):
			out, a = append(out, a[0]), a[1:]
		case len(a) > 0 && a[0].T == b[0].T:
			out, a, b = append(out, b[0]), a[1:], b[1:]
		default:
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(dst[:0], out...)
}

// truncateLog deletes the log segments that hold no point still in the
// head and no commit still on its way into it.
func (h *Head) truncateLog() (uint32, error) {
	// Commits hold commitMu shared from reading the segment until their
	// points are in the head: once we hold it, every commit that wrote
	// below floor is in the head, and later ones write at floor or after.
	h.commitMu.Lock()
	floor := h.log.Segment()
	h.commitMu.Unlock()
	if oldest, ok := h.OldestSegment(); ok && oldest < floor {
		floor = oldest
	}
	if err := h.log.TruncateBefore(floor); err != nil {
		return 0, fmt.Errorf("ingest: truncate log: %w", err)
	}
	return floor, nil
}
