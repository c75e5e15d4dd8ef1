package flush

// quiet is what a complete flush round learned: no row it left in the
// head comes due before until, and rows entered in the hour index since
// (Head.ListedRows moved past listed) are the only others. A round
// before until with the count unchanged would take every entry, find
// none due and give them all back, which costs about 0.3 µs an open row:
// a day of backfilled history for a million series is 24 million
// entries every round, for the 10 to 20 minutes of its grace. Points
// added to a listed row only move its due time later; rows leaving the
// head (flushed early under memory pressure, deleted) only remove
// entries.
type quiet struct {
	until  int64  // Unix milliseconds
	listed uint64 // Head.ListedRows read before the round took its entries
	ok     bool   // set by a round that looked at every entry it took
}

// holds reports whether a round at nowMs, with the head's listed count
// now listed, can skip: nothing is due yet.
func (q *quiet) holds(nowMs int64, listed uint64) bool {
	return q.ok && nowMs < q.until && listed == q.listed
}

// before lowers until to t, a time at which some row may come due.
func (q *quiet) before(t int64) { q.until = min(q.until, t) }
