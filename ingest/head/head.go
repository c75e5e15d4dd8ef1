package head

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/wal"
)

// Head holds the points of open hour rows in memory, behind a write-ahead
// log. Appends go through Appenders; reads through AppendPoints and
// Iterator, or a row at a time through AppendRows and AppendRowPoints.
// All methods are safe for concurrent use.
//
// Lock order: commitMu, then a series shard's lock, then a series' lock,
// then the ref table's lock; the append path takes commitMu shared and
// series locks.
type Head struct {
	opts   HeadOptions
	fs     vfs.FS
	log    *wal.Log
	series *seriesShards
	refs   refTable
	hours  hourIndex
	touch  SeriesToucher        // the registrar's, or nil
	batch  SeriesBatchRegistrar // the registrar's, or nil
	// limiter enforces HeadOptions.SeriesLimits; nil when they are off.
	limiter *seriesLimiter
	replay  ReplayStats
	// openedMs is the Clock reading at OpenHead. A row whose hour ended
	// before it may already have a column in the store, written by an
	// earlier process whose flush history died with it, so its flush is
	// queued for compaction (see DetachRow).
	openedMs int64

	mem     atomic.Int64 // bytes held by series and rows
	nseries atomic.Int64
	// pressure wakes a flusher loop when memory is over MaxMemory;
	// flushFailing says the latest flush write failed; flushers counts the
	// running flusher loops. Together they decide throttling (admit).
	pressure     chan struct{}
	flushFailing atomic.Bool
	flushers     atomic.Int32
	// commitMu is held shared by a commit from reading the log segment
	// until its points are in the head, so the flusher can tell which
	// segments no commit still needs (TruncateLog).
	commitMu sync.RWMutex
	// fpSeed keys the row fingerprints AppendRows gives readers, and
	// rowIDs numbers the rows this process creates (openRow.id).
	fpSeed maphash.Seed
	rowIDs atomic.Uint64
}

// ReplayStats describe how a Head was rebuilt from its log at open.
type ReplayStats struct {
	// WAL is what the log read and dropped.
	WAL wal.ReplayStats
	// Series and Samples count what was rebuilt.
	Series, Samples int64
	// BadRecords counts intact records whose payload did not decode, or
	// series records with keys that do not fit the UID widths; skipped.
	BadRecords int64
	// OrphanSamples counts samples of a series no record in their segment
	// defined, because the log skipped the damaged series record that did
	// (or it did not decode): the points replay dropped. Samples inside a
	// damaged record are not counted: its bytes cannot be trusted to say
	// how many there were (WAL.CorruptRecords counts the records).
	OrphanSamples int64
}

// OpenHead opens the head's log in dir on fs (the vfs.FS the pebble engine
// uses) and rebuilds the head from it. Damaged records are skipped, with one
// error line per damaged place and per segment that lost points, never an
// error.
func OpenHead(fs vfs.FS, dir string, opts *HeadOptions) (*Head, error) {
	h := &Head{fs: fs, pressure: make(chan struct{}, 1), fpSeed: maphash.MakeSeed()}
	if opts != nil {
		h.opts = *opts
	}
	if err := h.opts.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	h.series = newSeriesShards(h.opts.Shards)
	h.openedMs = h.opts.Clock().UnixMilli()
	h.touch, _ = h.opts.Registrar.(SeriesToucher)
	h.batch, _ = h.opts.Registrar.(SeriesBatchRegistrar)
	h.limiter = newSeriesLimiter(h.opts.SeriesLimits, h.opts.Registrar, h.opts.Clock)
	r := newHeadReplay(h)
	log, err := wal.Open(fs, dir, &h.opts.WAL, r.record)
	if err != nil {
		return nil, fmt.Errorf("ingest: open head: %w", err)
	}
	h.log = log
	h.replay = r.finish(log.ReplayStats())
	return h, nil
}

// Close closes the log. Points still in the head stay in the log and come
// back at the next OpenHead.
func (h *Head) Close() error { return h.log.Close() }

// ReplayStats returns what OpenHead rebuilt.
func (h *Head) ReplayStats() ReplayStats { return h.replay }

// MemoryBytes returns the memory the head's series and rows hold, the
// figure the head.max_memory limit is enforced against.
func (h *Head) MemoryBytes() int64 { return h.mem.Load() }

// NumSeries returns the number of series in the head the registrar
// knows: a series a commit named but failed to register is not counted.
func (h *Head) NumSeries() int64 { return h.nseries.Load() }

// Ref returns the reference of the series with key, creating and
// registering it if it is new. key is metric UID ‖ tagk UID ‖ tagv
// UID ..., tags sorted by tagk UID bytes; it is not retained.
func (h *Head) Ref(key []byte) (SeriesRef, error) {
	s, err := h.getOrAdd(key)
	if err != nil {
		return 0, err
	}
	if _, err := h.register([]*memSeries{s}, nil); err != nil {
		return 0, err
	}
	return s.ref, nil
}

// getOrAdd returns the series of key, adding it if it is new. A new
// series is not registered yet (unless there is no registrar): it may be
// named by appends but holds no point until a commit registers it
// (register), so that one commit registers all its new series at once.
func (h *Head) getOrAdd(key []byte) (*memSeries, error) {
	if s := h.series.get(key); s != nil {
		return s, nil
	}
	if err := h.checkKey(key); err != nil {
		return nil, err
	}
	s, created := h.series.getOrAdd(key, func() *memSeries {
		s := &memSeries{key: string(key)}
		h.refs.add(s)
		return s
	})
	if created {
		h.mem.Add(seriesOverhead + int64(len(key)))
		if h.opts.Registrar == nil {
			h.activate(s)
		}
	}
	return s, nil
}

// checkKey validates a series key's shape against the UID widths.
func (h *Head) checkKey(key []byte) error {
	w := h.opts.Widths
	pair := w.TagK + w.TagV
	n := len(key) - w.Metric
	if n < 0 || n%pair != 0 {
		return fmt.Errorf("%w: %d bytes do not fit a %d-byte metric and %d-byte tag pairs", ErrBadSeriesKey, len(key), w.Metric, pair)
	}
	if n/pair > h.opts.MaxTags {
		return fmt.Errorf("%w: %d tags, at most %d", ErrBadSeriesKey, n/pair, h.opts.MaxTags)
	}
	for i := w.Metric + pair; i < len(key); i += pair {
		if bytes.Compare(key[i-pair:i-pair+w.TagK], key[i:i+w.TagK]) >= 0 {
			return fmt.Errorf("%w: tag %d is not after tag %d in tag key UID order", ErrBadSeriesKey, (i-w.Metric)/pair, (i-w.Metric)/pair-1)
		}
	}
	return nil
}

// OldestSegment returns the oldest WAL segment holding a point still in
// the head (rows being written included); ok is false when the head holds
// no point. Segments before it may be deleted once the flusher has written
// the rows they cover. It visits every series (once per flush round).
func (h *Head) OldestSegment() (seg uint32, ok bool) {
	h.series.forEach(func(s *memSeries) {
		s.mu.Lock()
		for _, rows := range [2][]openRow{s.rows, s.flushing} {
			for i := range rows {
				if m := rows[i].minSeg; !ok || m < seg {
					seg, ok = m, true
				}
			}
		}
		s.mu.Unlock()
	})
	return seg, ok
}
