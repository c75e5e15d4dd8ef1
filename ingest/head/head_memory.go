package head

// admit decides whether a commit may add points: yes while memory is
// within MaxMemory; above it the flusher loop is woken to write the oldest
// rows early, and the commit still goes through unless that cannot work
// (no loop runs, its latest write failed) or is losing the race (memory a
// quarter over the limit).
func (h *Head) admit() error {
	lim := h.opts.MaxMemory
	mem := h.mem.Load()
	if lim <= 0 || mem <= lim {
		return nil
	}
	select {
	case h.pressure <- struct{}{}:
	default:
	}
	if h.flushers.Load() > 0 && !h.flushFailing.Load() && mem <= lim+lim/4 {
		return nil
	}
	return &ThrottleError{Memory: mem, Limit: lim}
}

// OverLimit reports whether memory is above MaxMemory: the flusher then
// writes without pacing, and its loop relieves the head (Flusher.Relieve
// in ingest/flush).
func (h *Head) OverLimit() bool {
	return h.opts.MaxMemory > 0 && h.mem.Load() > h.opts.MaxMemory
}

// RelieveTarget is the memory an early flush brings the head down to: an
// eighth below the limit, so that the next commits do not trip it again
// at once.
func (h *Head) RelieveTarget() int64 { return h.opts.MaxMemory - h.opts.MaxMemory/8 }

// Pressure receives when a commit found memory over MaxMemory: a flusher
// loop waits on it to write the oldest rows early.
func (h *Head) Pressure() <-chan struct{} { return h.pressure }

// FlushLoopStarted and FlushLoopStopped count the running flusher loops:
// while one runs, a commit over MaxMemory is let through (admit) as long
// as flushing works and memory is within a quarter over the limit.
func (h *Head) FlushLoopStarted() { h.flushers.Add(1) }

// FlushLoopStopped is the end of a loop FlushLoopStarted counted.
func (h *Head) FlushLoopStopped() { h.flushers.Add(-1) }

// SetFlushFailing records whether the latest flush write failed: while it
// did, a commit over MaxMemory is refused (admit).
func (h *Head) SetFlushFailing(failing bool) { h.flushFailing.Store(failing) }
