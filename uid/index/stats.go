package index

import "sync/atomic"

// Stats count what an Index did since it was opened.
type Stats struct {
	// Series is the number of series in memory.
	Series int
	// Created counts series this Index registered first; Adopted counts
	// registrations that found the TSUID already taken by another
	// registration (another daemon, or a crash before this one logged it).
	Created, Adopted uint64
	// Learned counts series added from the store by refreshes and loads.
	Learned uint64
	// Refreshes and Resyncs count refreshes, and full rescans forced when
	// the log was trimmed past records this Index had not read.
	Refreshes, Resyncs uint64
	// Voided counts log sequence numbers this Index declared dead after
	// HoleTimeout.
	Voided uint64
	// SpansPersisted counts span extensions written.
	SpansPersisted uint64
	// Conflicts counts stored series whose id already named another
	// TSUID (corruption; the first one seen is kept).
	Conflicts uint64
	// Corrupt counts stored rows and records that could not be parsed and
	// were skipped.
	Corrupt uint64
}

type counters struct {
	created, adopted, learned atomic.Uint64
	refreshes, resyncs        atomic.Uint64
	voided, spans, conflicts  atomic.Uint64
	corrupt                   atomic.Uint64
}

// Stats returns the counters.
func (ix *Index) Stats() Stats {
	c := &ix.stats
	return Stats{
		Series:  ix.Len(),
		Created: c.created.Load(), Adopted: c.adopted.Load(), Learned: c.learned.Load(),
		Refreshes: c.refreshes.Load(), Resyncs: c.resyncs.Load(), Voided: c.voided.Load(),
		SpansPersisted: c.spans.Load(), Conflicts: c.conflicts.Load(), Corrupt: c.corrupt.Load(),
	}
}

// Len returns the number of series.
func (ix *Index) Len() int {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	return ix.mem.mu.n
}
