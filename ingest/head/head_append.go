package head

import (
	"errors"
	"fmt"
	"math"

	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/series"
)

// maxPayload splits a commit's log records: large commits become several
// records of about this size rather than one huge one.
const maxPayload = 1 << 20

// Appender collects points and commits them: first to the write-ahead log,
// then into the head. Use one per goroutine (per connection) and keep it:
// its buffers are reused, so steady-state appends do not allocate. An
// Appender is not safe for concurrent use.
type Appender struct {
	h       *Head
	samples []pendingSample
	buf     []byte
	enc     wal.SamplesEncoder
	defs    []*memSeries
	defSet  map[*memSeries]struct{}
	// fresh lists the distinct pending series not registered when their
	// point was added (freshSet: the same set), registered together by
	// Commit; keys is register's scratch.
	fresh    []*memSeries
	freshSet map[*memSeries]struct{}
	keys     [][]byte
	// logEnd is the log's end after this appender's latest successful
	// commit: Sync waits for a log sync that covers it.
	logEnd uint64
}

type pendingSample struct {
	s *memSeries
	p series.Point
}

// Appender returns a new appender.
func (h *Head) Appender() *Appender {
	return &Appender{h: h, defSet: make(map[*memSeries]struct{})}
}

// Append adds p to the series ref names. The point is neither durable nor
// visible until Commit.
func (a *Appender) Append(ref SeriesRef, p series.Point) error {
	s := a.h.refs.get(ref)
	if s == nil {
		return fmt.Errorf("%w: %d", ErrUnknownRef, ref)
	}
	return a.add(s, p)
}

// AppendKey adds p to the series with key, creating the series if it is
// new, and returns the series' reference for later Appends. A new series
// is registered in the series index by Commit, together with the commit's
// other new series, before any of its points is logged or visible.
func (a *Appender) AppendKey(key []byte, p series.Point) (SeriesRef, error) {
	s, err := a.h.getOrAdd(key)
	if err != nil {
		return 0, err
	}
	return s.ref, a.add(s, p)
}

func (a *Appender) add(s *memSeries, p series.Point) error {
	if p.T < 0 || p.T > MaxTimestamp || p.Kind > series.Float64 {
		return fmt.Errorf("%w: timestamp %d, kind %d", ErrOutOfBounds, p.T, p.Kind)
	}
	a.samples = append(a.samples, pendingSample{s, p})
	if !s.registered.Load() {
		a.addFresh(s)
	}
	return nil
}

// addFresh remembers s for registration at Commit.
func (a *Appender) addFresh(s *memSeries) {
	if a.freshSet == nil {
		a.freshSet = make(map[*memSeries]struct{})
	}
	if _, dup := a.freshSet[s]; !dup {
		a.freshSet[s] = struct{}{}
		a.fresh = append(a.fresh, s)
	}
}

// Len returns the number of points waiting for Commit.
func (a *Appender) Len() int { return len(a.samples) }

// Rollback drops the points waiting for Commit.
func (a *Appender) Rollback() {
	a.samples = a.samples[:0]
	if len(a.fresh) > 0 {
		clear(a.fresh)
		a.fresh = a.fresh[:0]
		clear(a.freshSet)
	}
}

// Commit registers the new series of the pending points (one registrar
// call for all of them), writes the points to the log and then makes them
// visible in the head. It returns once the log record is written (in the
// OS page cache), or synced to stable storage when sync is set: only then
// are the points acknowledged. On error (a *ThrottleError, the registrar's
// error, or wrapping wal.ErrWrite, wal.ErrDiskFull or wal.ErrClosed;
// IsRetryable holds for all but a registrar's permanent failure) no point
// of this commit is acknowledged or visible, and a new series that failed
// to register holds no point until a later commit registers it. Either way
// the appender is empty afterwards.
func (a *Appender) Commit(sync bool) error {
	defer a.Rollback()
	if len(a.samples) == 0 {
		return nil
	}
	if err := a.h.admit(); err != nil {
		return err
	}
	// Outside commitMu: registration writes to the store, and a flusher
	// waiting for commitMu would hold up every other commit meanwhile.
	if len(a.fresh) > 0 {
		var err error
		if a.keys, err = a.h.register(a.fresh, a.keys); err != nil {
			return err
		}
	}
	a.h.commitMu.RLock()
	defer a.h.commitMu.RUnlock()
	for {
		seg := a.h.log.Segment()
		a.encode(seg)
		err := a.h.log.Append(a.buf, seg, sync)
		if errors.Is(err, wal.ErrSegmentChanged) {
			continue
		}
		if err != nil {
			return fmt.Errorf("ingest: commit %d points: %w", len(a.samples), err)
		}
		for _, s := range a.defs {
			s.walSeg.Store(seg)
		}
		a.logEnd = a.h.log.Written()
		a.apply(seg)
		return nil
	}
}

// encode writes the log records of the pending points for segment seg:
// series records for the series seg has not defined yet, then samples.
func (a *Appender) encode(seg uint32) {
	a.buf = a.buf[:0]
	a.collectDefs(seg)
	start := -1
	for _, s := range a.defs {
		if start < 0 {
			a.buf, start = wal.BeginRecord(a.buf, wal.TypeSeries)
		}
		a.buf = wal.AppendSeries(a.buf, uint64(s.ref), keyBytes(s.key))
		if len(a.buf)-start >= maxPayload {
			wal.FinishRecord(a.buf, start)
			start = -1
		}
	}
	if start >= 0 {
		wal.FinishRecord(a.buf, start)
	}
	a.encodeSamples()
}

// collectDefs lists the distinct pending series without a series record in
// segment seg. A series' walSeg is set only after its record is written, so
// a series another appender is defining right now is defined twice, which
// replay tolerates, rather than not at all.
func (a *Appender) collectDefs(seg uint32) {
	a.defs = a.defs[:0]
	clear(a.defSet)
	for i := range a.samples {
		s := a.samples[i].s
		if s.walSeg.Load() == seg {
			continue
		}
		if _, dup := a.defSet[s]; !dup {
			a.defSet[s] = struct{}{}
			a.defs = append(a.defs, s)
		}
	}
}

// encodeSamples appends samples records for the pending points: samples-ms
// records when a point has the millisecond mark, which only OpenTSDB
// clients giving milliseconds set.
func (a *Appender) encodeSamples() {
	typ := wal.TypeSamples
	for i := range a.samples {
		if a.samples[i].p.Ms {
			typ = wal.TypeSamplesMs
			break
		}
	}
	start := -1
	for i := range a.samples {
		if start < 0 {
			a.buf, start = wal.BeginRecord(a.buf, typ)
			if typ == wal.TypeSamplesMs {
				a.enc.ResetMs()
			} else {
				a.enc.Reset()
			}
		}
		ps := &a.samples[i]
		a.buf = a.enc.Append(a.buf, uint64(ps.s.ref), ps.p)
		if len(a.buf)-start >= maxPayload {
			wal.FinishRecord(a.buf, start)
			start = -1
		}
	}
	if start >= 0 {
		wal.FinishRecord(a.buf, start)
	}
}

// apply adds the logged points to their series, holding each series' lock
// across a run of its points.
func (a *Appender) apply(seg uint32) {
	now := a.h.opts.Clock().UnixMilli()
	var cur *memSeries
	var delta int64
	mint, maxt := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range a.samples {
		ps := &a.samples[i]
		mint, maxt = min(mint, ps.p.T), max(maxt, ps.p.T)
		if ps.s != cur {
			if cur != nil {
				cur.mu.Unlock()
			}
			cur = ps.s
			cur.mu.Lock()
		}
		delta += cur.append(a.h, ps.p, seg, now)
	}
	cur.mu.Unlock()
	if delta != 0 {
		a.h.mem.Add(delta)
	}
	if c := a.h.opts.Changes; c != nil {
		c.Mark(mint, maxt) // after the points are visible: see internal/changes
	}
}

// Sync returns once every point this appender committed is on stable
// storage: at once when a log sync already covered its latest commit,
// else after the next sync, which it shares with every appender waiting
// meanwhile (see wal.Log.SyncTo). It is the durability barrier of a
// connection that commits without sync. The error wraps wal.ErrWrite,
// wal.ErrDiskFull or wal.ErrClosed.
func (a *Appender) Sync() error {
	if err := a.h.log.SyncTo(a.logEnd); err != nil {
		return fmt.Errorf("ingest: sync the log: %w", err)
	}
	return nil
}
