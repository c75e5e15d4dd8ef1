package index

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// RegisterSeries records a series with unknown hours, creating it if it is
// new (ingest's SeriesRegistrar). A series whose hours are unknown is never
// skipped by RestrictTime until Touch or Register gives it some. It is
// idempotent and safe for concurrent use; for a known series it is one map
// lookup and does not allocate. key is metric UID ‖ (tagk UID ‖ tagv UID)*
// in ascending tagk order and is not retained.
func (ix *Index) RegisterSeries(key []byte) error {
	if ix.mem.get(key) != nil {
		return nil
	}
	return ix.withStoreTimeout("register series", func(ctx context.Context) error {
		_, err := ix.register(ctx, key, noSpan)
		return err
	})
}

// Register records a series holding data in the hours of [firstMs, lastMs]
// (Unix milliseconds), creating it if it is new and otherwise widening its
// span to cover them exactly (no LastSlack). A new series is persisted
// before Register returns; a widened span is persisted by the next Flush
// (the loop's, within RefreshInterval). tsuid is not retained.
func (ix *Index) Register(ctx context.Context, tsuid []byte, firstMs, lastMs int64) (SeriesID, error) {
	e, err := ix.register(ctx, tsuid, spanOf(firstMs, lastMs))
	if err != nil {
		return 0, err
	}
	return e.id, nil
}

// Touch widens a known series' span to the hour of ms: an earlier first
// hour as it is, a later last hour plus LastSlack. It reports false when the
// series is unknown (Register it first). It does not allocate and takes no
// lock when the hour is already covered; the extension is persisted by the
// next Flush, not before Touch returns, so a writer that crashes must touch
// again the hours it replays from its log.
func (ix *Index) Touch(tsuid []byte, ms int64) bool {
	e := ix.mem.get(tsuid)
	if e == nil {
		return false
	}
	h := hourOf(ms)
	f, l := e.first.Load(), e.last.Load()
	if f <= h && h <= l {
		return true
	}
	sp := span{h, h}
	if h > l || f > l {
		sp.last = min(h+ix.opts.slackHours(), maxHour)
	}
	ix.widen(e, sp)
	return true
}

// widen merges sp into e's span and queues the change for Flush.
func (ix *Index) widen(e *seriesEntry, sp span) {
	if e.widen(sp) {
		ix.markDirty(e)
	}
}

func (ix *Index) markDirty(e *seriesEntry) {
	if e.dirty.CompareAndSwap(false, true) {
		ix.dirty.Lock()
		ix.dirty.list = append(ix.dirty.list, e)
		ix.dirty.Unlock()
	}
}

// register returns the entry of tsuid, creating the series once however
// many goroutines ask for it at the same time.
func (ix *Index) register(ctx context.Context, tsuid []byte, sp span) (*seriesEntry, error) {
	if e := ix.mem.get(tsuid); e != nil {
		ix.widen(e, sp)
		return e, nil
	}
	if err := checkTSUID(ix.opts.Widths, tsuid); err != nil {
		return nil, err
	}
	if ix.closed.Load() {
		return nil, ErrClosed
	}
	c, leader := ix.join(tsuid)
	if leader {
		c.e, c.err = ix.createOne(ctx, tsuid, sp)
		ix.leave(tsuid, c)
		return c.e, c.err
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		return nil, c.err
	}
	ix.widen(c.e, sp)
	return c.e, nil
}

// join returns the registration in progress for tsuid, or starts one
// (leader true). A call with a nil done channel is an entry found already.
func (ix *Index) join(tsuid []byte) (c *call, leader bool) {
	ix.flight.Lock()
	defer ix.flight.Unlock()
	if e := ix.mem.get(tsuid); e != nil {
		c = &call{done: make(chan struct{}), e: e}
		close(c.done)
		return c, false
	}
	if c = ix.flight.m[string(tsuid)]; c != nil {
		return c, false
	}
	c = &call{done: make(chan struct{})}
	ix.flight.m[string(tsuid)] = c
	return c, true
}

func (ix *Index) leave(tsuid []byte, c *call) {
	ix.flight.Lock()
	delete(ix.flight.m, string(tsuid))
	ix.flight.Unlock()
	close(c.done)
}

func (ix *Index) createOne(ctx context.Context, tsuid []byte, sp span) (*seriesEntry, error) {
	items := []item{{sp: sp, tsuid: tsuid}}
	es, err := ix.create(ctx, items)
	if err != nil {
		return nil, fmt.Errorf("index: register %x: %w", tsuid, err)
	}
	return es[0], nil
}

// checkTSUID checks a TSUID's shape: a non-zero metric UID, whole tag
// pairs, non-zero tag keys in strictly ascending byte order.
func checkTSUID(w series.Widths, tsuid []byte) error {
	pair := w.TagK + w.TagV
	n := len(tsuid) - w.Metric
	switch {
	case n < 0 || n%pair != 0:
		return fmt.Errorf("%w: %x: %d bytes do not fit a %d-byte metric and %d-byte tag pairs", ErrBadTSUID, tsuid, len(tsuid), w.Metric, pair)
	case len(tsuid)+2 > storage.MaxRowKeySize:
		return fmt.Errorf("%w: %d bytes", ErrBadTSUID, len(tsuid))
	case readUID(tsuid[:w.Metric]) == 0:
		return fmt.Errorf("%w: %x: metric UID 0", ErrBadTSUID, tsuid)
	}
	var prev []byte
	for p := tsuid[w.Metric:]; len(p) > 0; p = p[pair:] {
		k := p[:w.TagK]
		if readUID(k) == 0 || (prev != nil && bytes.Compare(prev, k) >= 0) {
			return fmt.Errorf("%w: %x: tag key %x is zero or not after %x", ErrBadTSUID, tsuid, k, prev)
		}
		prev = k
	}
	return nil
}

// Registration is one series for RegisterMany.
type Registration struct {
	// TSUID is metric UID ‖ (tagk UID ‖ tagv UID)*, tags in ascending tagk
	// order. It is not retained.
	TSUID []byte
	// FirstMs and LastMs bound the series' data, Unix milliseconds.
	FirstMs, LastMs int64
}

// createChunk bounds the series one create call persists.
const createChunk = 4096

// RegisterMany is Register for many series with fewer storage calls: new
// series are claimed concurrently, their rows written with one Apply and
// announced in one log record per 1024. It is meant for bulk loads such as
// `tsd index rebuild`. A bad TSUID fails the call before any new series is
// written; spans of known series may have been widened by then.
func (ix *Index) RegisterMany(ctx context.Context, regs []Registration) error {
	var fresh []item
	seen := make(map[string]int)
	for _, r := range regs {
		sp := spanOf(r.FirstMs, r.LastMs)
		if e := ix.mem.get(r.TSUID); e != nil {
			ix.widen(e, sp)
			continue
		}
		if err := checkTSUID(ix.opts.Widths, r.TSUID); err != nil {
			return err
		}
		if i, ok := seen[string(r.TSUID)]; ok {
			fresh[i].sp = fresh[i].sp.merge(sp)
			continue
		}
		seen[string(r.TSUID)] = len(fresh)
		fresh = append(fresh, item{sp: sp, tsuid: r.TSUID})
	}
	if len(fresh) > 0 && ix.closed.Load() {
		return ErrClosed
	}
	for len(fresh) > 0 {
		n := min(len(fresh), createChunk)
		if _, err := ix.create(ctx, fresh[:n]); err != nil {
			return fmt.Errorf("index: register %d series: %w", n, err)
		}
		fresh = fresh[n:]
	}
	return nil
}
