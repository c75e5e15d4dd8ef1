package wal

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// rotateLocked writes the pending batch to the current segment, syncs and
// closes it, and starts the next one. The caller holds mu, not the role.
// On failure the log stays on the current segment, which is still open.
// Appends wait while it runs: bytes encoded for the old segment must not
// land in the new one.
func (l *Log) rotateLocked() error {
	l.takeRoleLocked()
	l.mu.rotating = true
	defer func() {
		l.mu.rotating = false
		l.releaseRoleLocked()
	}()
	l.flushPendingLocked()
	next, prevLen := l.mu.seg+1, l.w.off
	l.mu.Unlock()
	f, err := l.createSegment(next, prevLen)
	l.mu.Lock()
	if err != nil {
		return err
	}
	l.w.f.Close()
	l.switchLocked(f, next)
	return nil
}

// startSegment creates the first segment of a freshly opened log.
func (l *Log) startSegment(seg uint32, prevLen int64) error {
	f, err := l.createSegment(seg, prevLen)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.switchLocked(f, seg)
	l.mu.Unlock()
	return nil
}

// deferSegment makes seg the current segment without a file, for Open on a
// full disk; startDeferredLocked creates it at the first append.
func (l *Log) deferSegment(seg uint32, prevLen int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.prevLen = prevLen
	l.mu.seg, l.mu.segLen, l.mu.segStart, l.mu.noFile = seg, 0, 0, true
	l.segment.Store(seg)
}

// startDeferredLocked creates the segment Open could not. The caller holds
// mu, not the role; appends wait while it runs.
func (l *Log) startDeferredLocked() error {
	l.takeRoleLocked()
	l.mu.rotating = true
	defer func() {
		l.mu.rotating = false
		l.releaseRoleLocked()
	}()
	if !l.mu.noFile {
		return nil // another appender created it meanwhile
	}
	seg, prevLen := l.mu.seg, l.w.prevLen
	l.mu.Unlock()
	f, err := l.createSegment(seg, prevLen)
	l.mu.Lock()
	if err != nil {
		return err
	}
	l.mu.noFile = false
	l.switchLocked(f, seg)
	return nil
}

// switchLocked makes f, holding just its header, the current segment. The
// previous segment was synced by createSegment's caller's contract.
func (l *Log) switchLocked(f segmentFile, seg uint32) {
	l.w.f, l.w.off = f.f, f.off
	l.mu.seg, l.mu.segLen, l.mu.segStart = seg, f.off, f.off
	l.mu.synced = l.mu.written
	l.segment.Store(seg)
}

// segmentFile is a new segment holding its header.
type segmentFile struct {
	f   vfs.File
	off int64
}

// createSegment syncs the current segment (if any), then creates segment
// seg with its header and makes both the file and its directory entry
// durable, so a segment exists on disk only after its predecessor is
// complete on disk. The caller holds the writer role.
func (l *Log) createSegment(seg uint32, prevLen int64) (segmentFile, error) {
	if l.w.f != nil {
		if err := l.w.f.Sync(); err != nil {
			return segmentFile{}, writeError("sync segment before rotation", err)
		}
	}
	path := l.fs.PathJoin(l.dir, SegmentName(seg))
	f, err := l.fs.Create(path, writeCategory)
	if err != nil {
		return segmentFile{}, writeError("create segment", err)
	}
	hdr := AppendRecord(nil, TypeHeader, AppendHeader(nil, seg, prevLen))
	if err := l.initSegment(f, hdr); err != nil {
		f.Close()
		_ = l.fs.Remove(path)
		return segmentFile{}, fmt.Errorf("segment %s: %w", SegmentName(seg), err)
	}
	return segmentFile{f: f, off: int64(len(hdr))}, nil
}

// initSegment writes and syncs a new segment's header and directory entry.
func (l *Log) initSegment(f vfs.File, hdr []byte) error {
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return writeError("write segment header", err)
	}
	if err := f.Sync(); err != nil {
		return writeError("sync segment header", err)
	}
	if err := durable.SyncDir(l.fs, l.dir); err != nil {
		return writeError("sync log directory", err)
	}
	return nil
}

// Rotate starts a new segment now, so that every record written so far is
// in segments before Segment() and TruncateBefore can free them all (the
// flusher does this after flushing the whole head). A log whose current
// segment holds no record stays where it is.
func (l *Log) Rotate() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.mu.rotating || l.mu.writing {
		l.mu.cond.Wait()
	}
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.segLen == l.mu.segStart && len(l.mu.pending) == 0 {
		return nil
	}
	return l.rotateLocked()
}
