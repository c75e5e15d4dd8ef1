package read

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/series"
)

// reserve hands the row cache memory for new entries that is already
// resident. A cold read (the first after a bulk load or a restart) would
// otherwise decode every row it meets into fresh memory, and a fresh page
// is what such a read spends its time on: on a VM a page fault costs
// about 12 µs, more than decoding the 360 points that fill two pages.
// Entries are carved from blocks a filler goroutine allocates and touches
// beforehand, off the query's path, keeping up to depth blocks ready from
// the first read that asks for one, or from start (Reader.FillReserve: a
// daemon that serves queries fills it as it starts, one that only
// ingests keeps none); a row that finds the reserve empty is read as if
// uncached (a head row from its encoded snapshot, a stored row into the
// reader's buffer), and a later read admits it. The memory kept ready is
// Options.RowCacheReserve. Filled only on demand, the reserve was empty
// for the queries right after a bulk load: they came back to back, so
// the filler made a block per reservePace, and their rows met an empty
// reserve run after run (after five runs of each query of bench's set,
// 680 of the 720 rows of its 8-host, 10-metric, 8-hour query were still
// uncached at its sixth, which took 7-10 ms against 3 ms cached).
// The filler makes a block at most every reservePace. A block faulted in
// page by page (256 faults, about 3 ms on a VM) stalled the process's
// other threads, and a 0.04 ms query that met one took 1-5 ms; queries answered from the row cache or the PromQL answer
// cache take no block, so before reads told the reserve they began
// (Reader.Reading), a stream of them looked quiet and met the filler at
// full speed. A block's pages are now populated in one madvise call where
// the kernel can (MADV_POPULATE_WRITE, Linux 5.14), then written once each
// (populate says why both), a piece at a time: a read that begins while
// the filler makes a block pauses it after the piece in hand
// (populateYielding), for at most reservePace a block. Until Stop 49
// the filler made a block per 50 ms (20 MiB/s) while reads went on and
// ran at full speed only once none had begun for 20 ms, which held back
// the reads it meant to spare: TSBS's queries draw their hosts and hours
// at random, so a run of them keeps meeting rows no query has cached, and
// at 20 MiB/s the cache needed ten seconds of back-to-back queries to
// hold the 200 MB of the devops day. A thousand of its cpu-max-all-8
// queries back to back right after a restart took 5.5 ms each at a 50
// ms pace, 3.1 ms at 5 ms and 2.4-2.7 ms at 2 ms, with half the daemon's
// CPU for the whole run at 2 ms (bench/README.md, Stop 49).
//
// An entry's points are a slice of its block, so a block is freed once
// every entry carved from it is evicted and no reader holds one; entries
// of one block enter the cache together and mostly age out together.
type reserve struct {
	mu      sync.Mutex
	cur     []series.Point   // the block being carved: cur[len:cap] is free
	ready   [][]series.Point // touched blocks, not carved yet
	depth   int
	filling bool
	made    time.Time      // when the filler last made one
	wg      sync.WaitGroup // the filler

	// began is when a read last began, as nanoseconds since epoch
	// (reading), 0 before the first; atomic, since every read sets it
	// without the lock.
	began atomic.Int64
}

// epoch is began's origin: time.Since keeps it on the monotonic clock.
var epoch = time.Now()

const (
	// reserveBlock is a reserve block's size in points (1 MiB).
	reserveBlock = (1 << 20) / pointBytes
	// touchStride is the points between two writes that fault a block's
	// pages in (one a 4 KiB page).
	touchStride = 4096 / pointBytes
	// reservePace is the least time between two blocks: up to 500
	// MiB/s, in practice as fast as the filler populates and writes a
	// block (about 2 ms a MiB on a VM, so up to one core while reads
	// keep taking blocks; none once the reserve is full again).
	reservePace = 2 * time.Millisecond
	// reservePiece is how much of a block the filler populates before it
	// looks for a read that began meanwhile: 48 pages, whole ones (a
	// multiple of both the point and the page size), about 0.2 ms.
	reservePiece = 16 * 12288 / pointBytes
)

// newReserve returns a reserve of about bytes, or nil (entries come from
// the heap as they are made) when bytes is not positive.
func newReserve(bytes int64) *reserve {
	if bytes <= 0 {
		return nil
	}
	return &reserve{depth: int(max(1, bytes/(reserveBlock*pointBytes)))}
}

// alloc returns an empty slice with room for n points, from resident
// memory when it can; nil when the reserve has none ready, which starts
// the filler. A row of more than a quarter block comes from the heap, so
// that a block is not left mostly unused.
func (rs *reserve) alloc(n int) []series.Point {
	if rs == nil || n > reserveBlock/4 {
		return make([]series.Point, 0, n)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cap(rs.cur)-len(rs.cur) < n {
		if len(rs.ready) == 0 {
			rs.fillLocked()
			return nil
		}
		k := len(rs.ready) - 1
		rs.cur, rs.ready[k] = rs.ready[k][:0], nil
		rs.ready = rs.ready[:k]
		rs.fillLocked()
	}
	lo := len(rs.cur)
	rs.cur = rs.cur[:lo+n]
	return rs.cur[lo : lo : lo+n]
}

// start starts the filler, which fills the reserve at full speed while
// no read runs.
func (rs *reserve) start() {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	rs.fillLocked()
	rs.mu.Unlock()
}

// readyBytes returns the bytes ready to carve: the touched blocks and
// what is left of the block being carved.
func (rs *reserve) readyBytes() int64 {
	if rs == nil {
		return 0
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return int64(len(rs.ready)*reserveBlock+cap(rs.cur)-len(rs.cur)) * pointBytes
}

// fillLocked starts the filler unless it runs or the reserve is full. The
// caller holds rs.mu.
func (rs *reserve) fillLocked() {
	if rs.filling || len(rs.ready) >= rs.depth {
		return
	}
	rs.filling = true
	rs.wg.Go(rs.fill)
}

// fill adds touched blocks until depth are ready, then ends.
func (rs *reserve) fill() {
	for {
		rs.mu.Lock()
		wait := rs.waitLocked(time.Now())
		rs.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
			continue
		}
		b := make([]series.Point, reserveBlock)
		rs.populateYielding(b, time.Now())
		rs.mu.Lock()
		rs.ready, rs.made = append(rs.ready, b), time.Now()
		if len(rs.ready) >= rs.depth {
			rs.filling = false
			rs.mu.Unlock()
			return
		}
		rs.mu.Unlock()
	}
}

// waitLocked returns how long the filler must still wait at now before
// it makes a block: until reservePace has passed since the last one. The
// caller holds rs.mu.
func (rs *reserve) waitLocked(now time.Time) time.Duration {
	return reservePace - now.Sub(rs.made)
}

// populateYielding populates b a piece at a time, begun at start, and
// pauses between pieces while a read begun since start runs (pieceWait):
// a query that begins beside the filler then waits for one piece at
// most, about 0.2 ms, where it met the rest of a 1 MiB block (2-3 ms on
// a VM: a daemon's first query after a restart took a block, and the
// block its replacement took fell on a later query).
func (rs *reserve) populateYielding(b []series.Point, start time.Time) {
	for off := 0; off < len(b); off += reservePiece {
		for off > 0 {
			w := rs.pieceWait(start, time.Now())
			if w <= 0 {
				break
			}
			time.Sleep(w)
		}
		populate(b[off:min(off+reservePiece, len(b))])
	}
}

// pieceWait returns how long the filler, making a block begun at start,
// must wait at now before its next piece: when a read began after start,
// until the block has taken reservePace (under reads that never stop, a
// block still comes per reservePace); else not at all.
func (rs *reserve) pieceWait(start, now time.Time) time.Duration {
	b := rs.began.Load()
	if b == 0 || epoch.Add(time.Duration(b)).Before(start) {
		return 0
	}
	return max(0, reservePace-now.Sub(start))
}

// reading records that a read began: the block being made then pauses
// between its pieces (pieceWait).
func (rs *reserve) reading() {
	if rs != nil {
		rs.began.Store(int64(time.Since(epoch)))
	}
}

// populate faults b's pages in here, not in a query: the whole pages in
// one call where the kernel can (populateBlock), then a nonzero write to
// every page (touchStride is under a page, so none is stepped over). The
// write is needed even after populateBlock: on this machine kind (a VM)
// a populated page still cost about 6 µs at its first write of data,
// against 0.03 µs after, so a cache entry copied into populated pages
// paid that in the query (1.5 ms a MiB); a page written with zeros, as
// populating or reading /dev/zero leaves it, paid it too. Populating
// first still halves the filler's time: 1.7-2.4 ms a MiB for both, 3.4-4.7
// ms for the writes alone.
func populate(b []series.Point) {
	populateBlock(b)
	for i := 0; i < len(b); i += touchStride {
		b[i].T = 1
	}
}
