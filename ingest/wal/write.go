package wal

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Append writes recs, one or more whole framed records encoded for segment
// seg, and returns once they are written to the segment file (handed to the
// operating system), or synced to stable storage too when sync is set. An
// error wrapping ErrWrite means the records are not acknowledged; records
// acknowledged earlier are unaffected and later appends try again.
// ErrSegmentChanged means seg is no longer current: encode again for
// Segment() and retry. recs is not retained.
func (l *Log) Append(recs []byte, seg uint32, sync bool) error {
	if len(recs) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.reserveLocked(seg, int64(len(recs))); err != nil {
		return err
	}
	w := waiterPool.Get().(*waiter)
	*w = waiter{}
	l.mu.pending = append(l.mu.pending, recs...)
	l.mu.waiters = append(l.mu.waiters, w)
	l.mu.segLen += int64(len(recs))
	for !w.done {
		l.writeLocked()
	}
	err := w.err
	if err == nil && sync {
		err = l.syncLocked(w.end)
	}
	waiterPool.Put(w)
	return err
}

// Sync returns once every record written so far is on stable storage.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked(l.mu.written)
}

// reserveLocked checks that n bytes for seg can join the pending batch,
// starting a new segment first when they would overflow the current one.
func (l *Log) reserveLocked(seg uint32, n int64) error {
	for {
		switch {
		case l.mu.closed:
			return ErrClosed
		case l.mu.rotating:
			l.mu.cond.Wait()
		case seg != l.mu.seg:
			return ErrSegmentChanged
		case l.mu.noFile:
			if err := l.startDeferredLocked(); err != nil {
				return err
			}
		case l.mu.segLen+n <= l.opts.SegmentSize || l.mu.segLen == l.mu.segStart:
			return nil
		case l.mu.writing:
			l.mu.cond.Wait()
		default:
			if err := l.rotateLocked(); err != nil {
				return err
			}
		}
	}
}

// takeRoleLocked waits for the writer role and for any sync in flight,
// and takes the role: its callers replace the file (rotation, a deferred
// segment), which a sync must not see change under it.
func (l *Log) takeRoleLocked() {
	for l.mu.writing || l.mu.syncing {
		l.mu.cond.Wait()
	}
	l.mu.writing = true
}

// releaseRoleLocked gives the writer role back and wakes every waiter.
func (l *Log) releaseRoleLocked() {
	l.mu.writing = false
	l.mu.cond.Broadcast()
}

// writeLocked either waits for the writer in flight or becomes the writer
// and writes the pending batch. Callers loop until their waiter is done.
func (l *Log) writeLocked() {
	if l.mu.writing {
		l.mu.cond.Wait()
		return
	}
	l.mu.writing = true
	l.flushPendingLocked()
	l.releaseRoleLocked()
}

// flushPendingLocked writes the pending batch; the caller holds the writer
// role. It drops mu during the write.
func (l *Log) flushPendingLocked() {
	buf, ws := l.mu.pending, l.mu.waiters
	if len(buf) == 0 {
		return
	}
	l.mu.pending, l.mu.waiters = l.w.spare[:0], l.w.spareWaiters[:0]
	l.mu.Unlock()
	err := l.writeFile(buf)
	l.mu.Lock()
	if err == nil {
		l.mu.written += uint64(len(buf))
	} else {
		l.mu.segLen -= int64(len(buf))
	}
	for _, w := range ws {
		w.done, w.err, w.end = true, err, l.mu.written
	}
	clear(ws)
	l.w.spare, l.w.spareWaiters = buf[:0], ws[:0]
}

// writeFile writes buf at the end of the valid part of the segment. It
// writes at an explicit offset so that after a failed, possibly partial
// write the next batch overwrites the garbage instead of following it.
func (l *Log) writeFile(buf []byte) error {
	if _, err := l.w.f.WriteAt(buf, l.w.off); err != nil {
		return writeError("write segment", err)
	}
	l.w.off += int64(len(buf))
	return nil
}

// writeError wraps a file system error in ErrWrite or ErrDiskFull.
func writeError(step string, err error) error {
	if vfs.IsNoSpaceError(err) {
		return fmt.Errorf("%w: %s: %w", ErrDiskFull, step, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrWrite, step, err)
}

// drainLocked writes every pending batch (for Close).
func (l *Log) drainLocked() {
	for l.mu.writing || len(l.mu.pending) > 0 {
		l.writeLocked()
	}
}

// syncLocked returns once the first end bytes written are synced. One sync
// runs at a time and covers everything written when it starts, so the
// callers waiting behind it share the next one (group commit). Writes go on
// while it runs: the file takes a write and a sync at once, and bytes
// written during the sync are simply not counted as synced by it. Only a
// rotation waits for it (takeRoleLocked), since it replaces the file.
func (l *Log) syncLocked(end uint64) error {
	for l.mu.synced < end {
		if l.mu.syncing || l.mu.rotating {
			l.mu.cond.Wait()
			continue
		}
		l.mu.syncing = true
		target, f := l.mu.written, l.w.f
		l.mu.Unlock()
		start := time.Now()
		err := f.Sync()
		if l.opts.ObserveSync != nil {
			l.opts.ObserveSync(time.Since(start))
		}
		l.mu.Lock()
		l.mu.syncing = false
		if err == nil && target > l.mu.synced {
			l.mu.synced = target
		}
		l.mu.cond.Broadcast()
		if err != nil {
			return writeError("sync segment", err)
		}
	}
	return nil
}
