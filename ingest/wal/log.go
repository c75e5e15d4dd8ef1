package wal

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// Log is a write-ahead log of segment files in one directory. Append is
// safe for concurrent use; appends that arrive while a write is in flight
// are written together by the next one (group commit).
//
// Lock order: a goroutine holds mu to change the log's state and the writer
// role (mu.writing) to write the file or replace it; a sync runs beside
// writes under its own flag (mu.syncing). No I/O happens while holding mu.
type Log struct {
	fs   vfs.FS
	dir  string
	opts Options
	lock io.Closer

	// segment mirrors mu.seg so appenders can read it without the lock.
	segment atomic.Uint32
	replay  ReplayStats

	mu struct {
		sync.Mutex
		cond     sync.Cond
		closed   bool
		writing  bool      // the writer role: its holder owns w
		syncing  bool      // a sync of w.f is in flight (syncLocked)
		noFile   bool      // seg could not be created yet (full disk at Open)
		rotating bool      // a new segment is being started; appends wait
		seg      uint32    // segment that pending bytes go to
		first    uint32    // oldest segment still on disk
		segLen   int64     // bytes of seg written or pending, failed writes excluded
		segStart int64     // segLen of seg holding only its header
		pending  []byte    // framed records waiting for the writer
		waiters  []*waiter // appenders whose records are in pending
		written  uint64    // bytes written since Open, all segments
		synced   uint64    // prefix of written known to be on stable storage
	}
	// w belongs to the goroutine holding the writer role.
	w struct {
		f            vfs.File
		off          int64 // valid length of f
		prevLen      int64 // while mu.noFile: the header's prev of seg
		spare        []byte
		spareWaiters []*waiter
	}

	stopCh chan struct{}
	syncWG sync.WaitGroup
}

// waiter is one append waiting for its bytes to be written.
type waiter struct {
	done bool
	err  error
	end  uint64 // mu.written after the batch that held the bytes
}

var waiterPool = sync.Pool{New: func() any { return new(waiter) }}

// Open opens the log in dir on fs (created if missing), replays every intact
// record through fn (which may be nil), skipping damaged records and
// keeping everything after them, and starts a new segment for appends,
// numbered after every existing one. Damage is logged and reported by
// ReplayStats, never returned: a log always opens unless the file system or
// fn fails.
func Open(fs vfs.FS, dir string, opts *Options, fn ReplayFunc) (*Log, error) {
	l := &Log{fs: fs, dir: dir, stopCh: make(chan struct{})}
	if opts != nil {
		l.opts = *opts
	}
	if err := l.opts.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	l.mu.cond.L = &l.mu.Mutex
	if err := l.lockDir(); err != nil {
		return nil, err
	}
	if err := l.open(fn); err != nil {
		l.lock.Close()
		return nil, err
	}
	l.startSyncLoop()
	return l, nil
}

// lockDir creates dir and takes its lock file, so two processes never
// append to one log.
func (l *Log) lockDir() error {
	if err := l.fs.MkdirAll(l.dir, 0o755); err != nil {
		return fmt.Errorf("wal: create %s: %w", l.dir, err)
	}
	// The log's own entry in its parent must survive a crash too.
	if err := durable.SyncDir(l.fs, l.fs.PathDir(l.dir)); err != nil {
		return fmt.Errorf("wal: sync parent of %s: %w", l.dir, err)
	}
	lock, err := l.fs.Lock(l.fs.PathJoin(l.dir, lockName))
	if err != nil {
		return fmt.Errorf("wal: lock %s: %w", l.dir, err)
	}
	l.lock = lock
	return nil
}

// open replays the existing segments and creates the next one. Existing
// segments are never written again: the new one is numbered after the
// last, and its header records the end of the last one's intact records,
// so a damaged tail there is not read again.
func (l *Log) open(fn ReplayFunc) error {
	if fn == nil {
		fn = func(uint32, RecordType, []byte) error { return nil }
	}
	segs, err := listSegments(l.fs, l.dir)
	if err != nil {
		return err
	}
	r := &replayer{fs: l.fs, dir: l.dir, fn: fn}
	lastValid, err := r.replayAll(segs)
	if err != nil {
		return err
	}
	l.replay = r.stats
	l.logDamage()
	next, prevLen := uint32(1), int64(-1)
	if len(segs) > 0 {
		next, prevLen = segs[len(segs)-1]+1, lastValid
		l.mu.first = segs[0]
	} else {
		l.mu.first = next
	}
	err = l.startSegment(next, prevLen)
	if errors.Is(err, ErrWrite) {
		// A full disk must not keep the log from opening: what it holds
		// is replayed and readable, and the first append creates the
		// segment once there is room (each fails with err until then).
		l.opts.Logger.Warn("wal: cannot start a new segment; appends fail until it can", "dir", l.dir, "err", err)
		l.deferSegment(next, prevLen)
		return nil
	}
	return err
}

// logDamage logs one line per damaged place replay skipped: an error for
// damage, a warning for the interrupted write a crash leaves at the end of
// the newest segment.
func (l *Log) logDamage() {
	s := l.replay
	for _, d := range s.Damaged {
		args := []any{"segment", l.fs.PathJoin(l.dir, SegmentName(d.Segment)), "offset", d.Offset,
			"bytes", d.Length, "reason", d.Reason}
		if d.Torn {
			l.opts.Logger.Warn("wal: interrupted write at the end of the log dropped", args...)
			continue
		}
		l.opts.Logger.Error("wal: damaged record skipped, later records kept", args...)
	}
	listed := int64(0)
	for _, d := range s.Damaged {
		if !d.Torn {
			listed++
		}
	}
	if more := s.CorruptRecords - listed; more > 0 {
		l.opts.Logger.Error("wal: more damaged records skipped", "dir", l.dir, "places", more,
			"total_places", s.CorruptRecords, "total_bytes", s.CorruptBytes)
	}
}

// ReplayStats returns what Open replayed and dropped.
func (l *Log) ReplayStats() ReplayStats { return l.replay }

// Segment returns the index of the segment that the next append goes to.
// Series records are per segment: an appender reads Segment, encodes its
// records for it and passes it to Append, which answers ErrSegmentChanged
// if the log moved on meanwhile.
func (l *Log) Segment() uint32 { return l.segment.Load() }

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// TruncateBefore deletes the segments below seg; the current segment is
// never deleted. The caller (the flusher) must have made durable
// elsewhere every point those segments hold.
func (l *Log) TruncateBefore(seg uint32) error {
	l.mu.Lock()
	first, cur := l.mu.first, l.mu.seg
	seg = min(seg, cur)
	if seg > first {
		l.mu.first = seg
	}
	l.mu.Unlock()
	for s := first; s < seg; s++ {
		if err := removeSegments(l.fs, l.dir, []uint32{s}); err != nil {
			return err
		}
	}
	if seg <= first {
		return nil
	}
	return durable.SyncDir(l.fs, l.dir)
}

// FirstSegment returns the oldest segment still on disk.
func (l *Log) FirstSegment() uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.first
}

// Close writes what is pending, syncs, stops the sync goroutine and closes
// the files. Appends after Close fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.mu.closed = true
	l.mu.cond.Broadcast()
	l.mu.Unlock()
	close(l.stopCh)
	l.syncWG.Wait()

	l.mu.Lock()
	l.drainLocked()
	err := l.syncLocked(l.mu.written)
	for l.mu.syncing { // a barrier's sync may still run on the file
		l.mu.cond.Wait()
	}
	l.mu.Unlock()
	if l.w.f == nil { // never started (full disk)
	} else if cerr := l.w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: close segment: %w", ErrWrite, cerr)
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// startSyncLoop starts the goroutine that syncs every FsyncInterval.
func (l *Log) startSyncLoop() {
	if l.opts.FsyncInterval < 0 {
		return
	}
	l.syncWG.Add(1)
	go func() {
		defer l.syncWG.Done()
		t := time.NewTicker(l.opts.FsyncInterval)
		defer t.Stop()
		for {
			select {
			case <-l.stopCh:
				return
			case <-t.C:
				l.periodicSync()
			}
		}
	}()
}

// periodicSync syncs whatever was written since the last sync.
func (l *Log) periodicSync() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed || l.mu.synced >= l.mu.written {
		return
	}
	if err := l.syncLocked(l.mu.written); err != nil {
		l.opts.Logger.Warn("wal: periodic sync failed", "dir", l.dir, "err", err)
	}
}
