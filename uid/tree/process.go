package tree

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// ProcessorOptions configure a Processor.
type ProcessorOptions struct {
	// Load reads a series' Meta by its raw TSUID. Required.
	Load func(ctx context.Context, tsuid []byte) (*Meta, error)
	// QueueSize bounds the series waiting to be processed. A series
	// offered to a full queue is dropped and counted (Stats.Dropped):
	// ingest never waits for trees. Default 10,000.
	QueueSize int
	// BatchSize is the most series one pass takes from the queue; each
	// pass reads the trees once. Default 256.
	BatchSize int
	// Timeout bounds one pass over a batch. Default 1m.
	Timeout time.Duration
	// RateLog receives dropped series and failures, rate-limited.
	// Default a ratelog over slog.Default().
	RateLog *ratelog.Logger
}

// Processor defaults.
const (
	DefaultQueueSize = 10_000
	DefaultBatchSize = 256
	DefaultTimeout   = time.Minute
)

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *ProcessorOptions) EnsureDefaults() *ProcessorOptions {
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RateLog == nil {
		o.RateLog = ratelog.New(ratelog.Options{})
	}
	return o
}

// Validate reports a missing field.
func (o *ProcessorOptions) Validate() error {
	if o.Load == nil {
		return errors.New("tree: ProcessorOptions.Load is nil")
	}
	return nil
}

// ProcessorStats are a Processor's counters since it started.
type ProcessorStats struct {
	// Processed counts series run through the enabled trees (once per
	// series, whatever the number of trees).
	Processed int64
	// Dropped counts series offered to a full queue.
	Dropped int64
	// Errors counts series a tree failed on (a read or write error).
	Errors int64
	// Queued is the series waiting now.
	Queued int64
}

// Processor runs every enabled tree over new series, off the write path:
// Offer queues a TSUID without blocking, and the Processor's goroutine
// takes the queue in batches, reads the trees once per batch and files
// each series in each of them. NewProcessor starts the goroutine and Close
// stops it; series still queued at Close are not processed (`tsd tree
// sync` files every series again).
type Processor struct {
	s    *Store
	opts ProcessorOptions
	ch   chan []byte

	processed, dropped, errors atomic.Int64

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewProcessor starts a Processor writing through s.
func NewProcessor(s *Store, opts ProcessorOptions) (*Processor, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Processor{s: s, opts: opts, ch: make(chan []byte, opts.QueueSize), cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p, nil
}

// Offer queues a new series' raw TSUID (copied); when the queue is full
// it drops it, counts it and logs it (rate-limited). It never blocks.
func (p *Processor) Offer(tsuid []byte) {
	select {
	case p.ch <- append([]byte(nil), tsuid...):
	default:
		p.dropped.Add(1)
		p.opts.RateLog.Warn("tree.queue_full", "", "tree processing queue full: a new series was not filed in the trees (run tsd tree sync to file it)",
			"tsuid", fmt.Sprintf("%X", tsuid), "queue", p.opts.QueueSize)
	}
}

// Stats returns the counters.
func (p *Processor) Stats() ProcessorStats {
	return ProcessorStats{Processed: p.processed.Load(), Dropped: p.dropped.Load(),
		Errors: p.errors.Load(), Queued: int64(len(p.ch))}
}

// Close stops the goroutine, after the batch in progress, and waits for
// it.
func (p *Processor) Close() {
	p.once.Do(func() {
		p.cancel()
		<-p.done
	})
}

func (p *Processor) loop(ctx context.Context) {
	defer close(p.done)
	batch := make([][]byte, 0, p.opts.BatchSize)
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-p.ch:
			batch = append(batch[:0], t)
		}
	fill:
		for len(batch) < p.opts.BatchSize {
			select {
			case t := <-p.ch:
				batch = append(batch, t)
			default:
				break fill
			}
		}
		p.pass(ctx, batch)
	}
}

// pass files a batch in every enabled tree.
func (p *Processor) pass(ctx context.Context, batch [][]byte) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	trees, err := p.s.EnabledTrees(ctx)
	if err != nil {
		p.errors.Add(int64(len(batch)))
		p.opts.RateLog.Error("tree.process", "", "tree processing: reading the trees failed; the batch was not filed", "series", len(batch), "err", err)
		return
	}
	for _, tsuid := range batch {
		if err := p.s.ProcessAll(ctx, trees, tsuid, p.opts.Load); err != nil {
			p.errors.Add(1)
			p.opts.RateLog.Error("tree.process", "", "tree processing failed", "tsuid", fmt.Sprintf("%X", tsuid), "err", err)
			continue
		}
		p.processed.Add(1)
	}
}

// EnabledTrees returns the trees that file new series: enabled, with
// rules.
func (s *Store) EnabledTrees(ctx context.Context) ([]*Tree, error) {
	all, err := s.Trees(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, t := range all {
		if t.Enabled && len(t.Rules) > 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// ProcessAll files one series in each of trees (TreeBuilder.processAllTrees),
// loading its Meta once; nothing is read when there are no trees.
func (s *Store) ProcessAll(ctx context.Context, trees []*Tree, tsuid []byte, load func(context.Context, []byte) (*Meta, error)) error {
	if len(trees) == 0 {
		return nil
	}
	m, err := load(ctx, tsuid)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range trees {
		if _, err := s.Process(ctx, t, m); err != nil {
			errs = append(errs, fmt.Errorf("tree %d: %w", t.ID, err))
		}
	}
	return errors.Join(errs...)
}
