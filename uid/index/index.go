package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// SeriesID is a series' dense id, the member type of every posting bitmap.
// Ids start at 1 and are never reused.
type SeriesID = uint32

// NameKey is the key under which filters, TagValues and the postings see
// metrics: a Filter with TagK NameKey matches metric names. UIDs start at 1,
// so no tag key is 0.
const NameKey uid.ID = 0

// Resolver turns UIDs into names and back; *uid.UIDs implements it. Filters
// that match names (every type but not_key) need it.
type Resolver interface {
	// Name returns the name of a UID, or an error wrapping uid.ErrNoSuchID.
	Name(ctx context.Context, kind uid.Kind, id uid.ID) (string, error)
	// Lookup returns the UID of a name, or an error wrapping
	// uid.ErrNoSuchName.
	Lookup(ctx context.Context, kind uid.Kind, name []byte) (uid.ID, error)
}

// Index is the series index of one store: every series' TSUID, dense id and
// hour span, and roaring postings from metrics and tag pairs to series ids.
// It is safe for concurrent use. Several Indexes (in one process or in many
// daemons) may share one meta table: each TSUID gets one id, and each Index
// sees the others' series after its next refresh.
type Index struct {
	opts Options
	meta storage.Table
	res  Resolver
	mem  memIndex

	ids  blockAlloc // series ids, counter "max"
	seqs blockAlloc // log sequence numbers, counter "seq"

	flight struct {
		sync.Mutex
		m map[string]*call // registrations in progress, by TSUID
	}
	dirty struct {
		sync.Mutex
		list []*seriesEntry // entries whose span grew since persisted
	}
	tail tailState
	// pending holds spans logged for ids not known yet. Lock order: tail,
	// pending, mem.
	pending struct {
		sync.Mutex
		m map[uint32]span
	}

	stats counters
	sels  selCache // Postings' answers (selcache.go)
	// damaged remembers the damaged row ranges already logged, so a refresh
	// that meets one again does not repeat the error line.
	damaged struct {
		sync.Mutex
		seen map[string]bool
	}

	// ctx is cancelled by Close; RegisterSeries and the loop use it.
	ctx    context.Context
	cancel context.CancelFunc
	stopCh chan struct{}
	loopWG sync.WaitGroup
	closed atomic.Bool
}

// call is one registration in progress; others asking for the same TSUID
// wait for it.
type call struct {
	done chan struct{}
	e    *seriesEntry
	err  error
}

// Open loads the index from the meta table (a scan of its index rows; the
// data table is not read) and starts the refresh loop. meta must have the
// family schema.MetaFamilyIndex (schema.MetaTableSpec). res may be nil when the
// caller never filters by name. opts may be nil.
func Open(ctx context.Context, meta storage.Table, res Resolver, opts *Options) (*Index, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	if err := storage.ValidateFamily(meta.Spec(), schema.MetaFamilyIndex); err != nil {
		return nil, fmt.Errorf("index: meta table: %w", err)
	}
	ix := &Index{opts: o, meta: meta, res: res, stopCh: make(chan struct{})}
	ix.mem.init(o.Widths)
	ix.ids = blockAlloc{qual: qualMax, block: o.IDBlock, limit: math.MaxUint32, next: 1}
	ix.seqs = blockAlloc{qual: qualSeq, block: o.SeqBlock, limit: math.MaxInt64, lifetime: o.HoleTimeout / 2, next: 1}
	ix.flight.m = make(map[string]*call)
	ix.ctx, ix.cancel = context.WithCancel(context.Background())
	if err := ix.load(ctx); err != nil {
		ix.cancel()
		return nil, fmt.Errorf("index: load: %w", err)
	}
	ix.startLoop()
	return ix, nil
}

// Close stops the refresh loop, persists pending hour extensions and gives
// up the unused log sequence numbers. The Index must not be used after.
func (ix *Index) Close() error {
	if !ix.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(ix.stopCh)
	ix.loopWG.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := ix.Flush(ctx)
	ix.abandonSeqs(ctx, true)
	ix.cancel()
	return err
}

func (ix *Index) startLoop() {
	if ix.opts.RefreshInterval < 0 {
		return
	}
	ix.loopWG.Add(1)
	go ix.loop()
}

// loop persists span extensions and refreshes, every RefreshInterval.
func (ix *Index) loop() {
	defer ix.loopWG.Done()
	t := time.NewTicker(ix.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ix.stopCh:
			return
		case <-t.C:
			ix.tick()
		}
	}
}

func (ix *Index) tick() {
	// A read-only store (a full disk) is reported by the store; the spans
	// wait for the next tick.
	if err := ix.Flush(ix.ctx); err != nil && !errors.Is(err, storage.ErrReadOnly) {
		ix.opts.Logger.Warn("index: persist hour spans", "err", err)
	}
	ix.abandonSeqs(ix.ctx, false)
	if err := ix.Refresh(ix.ctx); err != nil {
		ix.opts.Logger.Warn("index: refresh", "err", err)
	}
}

// halt stops the loop without persisting anything, as a crash would
// (tests).
func (ix *Index) halt() {
	if ix.closed.CompareAndSwap(false, true) {
		close(ix.stopCh)
		ix.loopWG.Wait()
		ix.cancel()
	}
}

// retry runs fn until it succeeds, fails with a non-retryable error or has
// been tried MaxAttempts times, pausing with doubling backoff.
func (ix *Index) retry(ctx context.Context, fn func() error) error {
	pause := ix.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		// Read-only lasts until the disk has room again, far longer than
		// a retry's backoff: the caller tries again later instead.
		if err == nil || !storage.IsRetryable(err) || errors.Is(err, storage.ErrReadOnly) || attempt >= ix.opts.MaxAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause *= 2
	}
}
