package head

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tsd-db/tsd/ingest/wal"
)

// flushWaitPoll is how often DeleteRange looks whether the rows a flush is
// writing are done.
const flushWaitPoll = 2 * time.Millisecond

// DeleteRange deletes from the head the points with mint <= T <= maxt of
// the series with keys (metric UID ‖ tag UIDs, as TSUIDs are), for a
// query's delete=true. It first logs a synced delete record, so a restart
// replaying the log deletes them again, and removes the points from the
// open rows, both while no commit is in flight: a point committed before
// the delete is gone, one committed after it is kept, in the head and
// after a replay alike. It then waits for the rows a flush is writing that
// overlap the range, which still hold the points, to reach the store, so
// that the caller's delete of the stored rows, made after DeleteRange
// returns, removes them too. ctx bounds that wait.
//
// A flush write that fails during the wait puts its row back with the
// deleted points (it merges them again): a delete racing a failing store
// is not guaranteed; the log record still deletes them at the next replay.
func (h *Head) DeleteRange(ctx context.Context, keys []string, mint, maxt int64) error {
	if len(keys) == 0 || maxt < mint {
		return nil
	}
	found, err := h.logAndDelete(keys, mint, maxt)
	if err != nil {
		return err
	}
	if c := h.opts.Changes; c != nil {
		c.Mark(mint, maxt)
	}
	for _, s := range found {
		if err := waitFlushing(ctx, s, mint, maxt); err != nil {
			return err
		}
	}
	return nil
}

// logAndDelete logs the delete and removes the points from the open rows
// while holding commitMu, so that the log and the head order the delete
// the same way against every commit. It returns the series found.
func (h *Head) logAndDelete(keys []string, mint, maxt int64) ([]*memSeries, error) {
	h.commitMu.Lock()
	defer h.commitMu.Unlock()
	buf := appendDeleteRecords(nil, keys, mint, maxt)
	for {
		err := h.log.Append(buf, h.log.Segment(), true)
		if errors.Is(err, wal.ErrSegmentChanged) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ingest: log delete of %d series: %w", len(keys), err)
		}
		break
	}
	var found []*memSeries
	for _, k := range keys {
		if s := h.series.get(keyBytes(k)); s != nil {
			h.deletePoints(s, mint, maxt)
			found = append(found, s)
		}
	}
	return found, nil
}

// appendDeleteRecords appends delete records for keys, split near
// maxPayload as commits split theirs.
func appendDeleteRecords(dst []byte, keys []string, mint, maxt int64) []byte {
	start := -1
	for _, k := range keys {
		if start < 0 {
			dst, start = wal.BeginRecord(dst, wal.TypeDelete)
			dst = wal.AppendDeleteRange(dst, mint, maxt)
		}
		dst = wal.AppendDeleteKey(dst, keyBytes(k))
		if len(dst)-start >= maxPayload {
			wal.FinishRecord(dst, start)
			start = -1
		}
	}
	if start >= 0 {
		wal.FinishRecord(dst, start)
	}
	return dst
}

// deletePoints removes the points of s in [mint, maxt] from its open rows
// (not from rows being written, whose chunk the flusher shares); a row left
// empty is dropped with its hour entry.
func (h *Head) deletePoints(s *memSeries, mint, maxt int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var delta int64
	for i := 0; i < len(s.rows); {
		r := &s.rows[i]
		if r.base > maxt || r.base+RowSpan <= mint {
			i++
			continue
		}
		before := r.bytes()
		if r.deleteRange(mint, maxt) {
			delta -= before
			h.hours.remove(s, r.base)
			s.rows = slices.Delete(s.rows, i, i+1)
			continue
		}
		delta += r.bytes() - before
		i++
	}
	h.mem.Add(delta)
}

// deleteRange removes the row's points in [mint, maxt], re-encoding the
// chunk with the rest; it reports whether the row is left empty.
func (r *openRow) deleteRange(mint, maxt int64) (empty bool) {
	buf := getPoints()
	defer putPoints(buf)
	pts := r.appendPoints((*buf)[:0], math.MinInt64, math.MaxInt64)
	kept := pts[:0]
	for _, p := range pts {
		if p.T < mint || p.T > maxt {
			kept = append(kept, p)
		}
	}
	*buf = pts
	if len(kept) == len(pts) {
		return false
	}
	if len(kept) == 0 {
		return true
	}
	r.mod++
	r.chunk.reset()
	for _, p := range kept {
		r.chunk.append(r.base, p)
	}
	r.ooo = r.ooo[:0]
	return false
}

// waitFlushing waits until s has no row being written that overlaps
// [mint, maxt].
func waitFlushing(ctx context.Context, s *memSeries, mint, maxt int64) error {
	for s.flushingOverlaps(mint, maxt) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("ingest: delete waiting for a flush: %w", context.Cause(ctx))
		case <-time.After(flushWaitPoll):
		}
	}
	return nil
}

// flushingOverlaps reports whether a row of s being written overlaps
// [mint, maxt].
func (s *memSeries) flushingOverlaps(mint, maxt int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.flushing {
		if b := s.flushing[i].base; b <= maxt && b+RowSpan > mint {
			return true
		}
	}
	return false
}

// remove drops the entry of the row of s at base, a row deleted from the
// head. The caller holds s.mu (series lock before shard lock).
func (x *hourIndex) remove(s *memSeries, base int64) {
	sh := x.shard(s)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ss := sh.m[base]
	if i := slices.Index(ss, s); i >= 0 {
		ss = slices.Delete(ss, i, i+1)
	}
	if len(ss) == 0 {
		delete(sh.m, base)
		return
	}
	sh.m[base] = ss
}

// replayDelete applies a delete record to the series rebuilt so far.
func (r *headReplay) replayDelete(payload []byte) {
	r.dd.Reset(payload)
	mint, maxt := r.dd.Range()
	for {
		key, ok := r.dd.Next()
		if !ok {
			break
		}
		if s := r.h.series.get(key); s != nil {
			r.h.deletePoints(s, mint, maxt)
		}
	}
	if err := r.dd.Err(); err != nil {
		r.bad(err)
	}
}
