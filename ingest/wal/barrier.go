package wal

// Written returns the log's end: the number of bytes written since Open,
// over all segments. The records of every Append that has returned lie
// below it, so a caller that reads it after its Append may later wait for
// those records with SyncTo.
func (l *Log) Written() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.written
}

// SyncTo returns once the first end bytes written since Open are on stable
// storage (see Written). It costs nothing when a sync already covered them
// (the periodic one, or another caller's). Otherwise it syncs, and one sync
// serves every caller waiting meanwhile whose bytes were written before it
// started (group commit): a barrier per client costs one sync per sync
// duration, not one per client. An error wraps ErrWrite (or ErrDiskFull),
// or is ErrClosed when the log closed before syncing them.
func (l *Log) SyncTo(end uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	end = min(end, l.mu.written) // nothing beyond the end can become synced
	if l.mu.synced >= end {
		return nil
	}
	if l.mu.closed {
		return ErrClosed
	}
	return l.syncLocked(end)
}
