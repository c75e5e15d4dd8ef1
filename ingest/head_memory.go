package ingest

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

// overLimit reports whether memory is above MaxMemory.
func (h *Head) overLimit() bool {
	return h.opts.MaxMemory > 0 && h.mem.Load() > h.opts.MaxMemory
}

// relieveTarget is the memory an early flush brings the head down to: an
// eighth below the limit, so that the next commits do not trip it again
// at once.
func (h *Head) relieveTarget() int64 { return h.opts.MaxMemory - h.opts.MaxMemory/8 }
