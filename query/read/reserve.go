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
// Entries are carved from blocks a filler goroutine allocates and faults
// in beforehand, off the query's path, keeping up to depth blocks ready
// from the reader's start, so that the first burst of reads after a bulk
// load finds them. The memory kept ready is Options.RowCacheReserve.
//
// The filler makes blocks only while no read runs: once no read has
// begun (reading) or asked for a block for reserveQuiet. Making blocks
// beside reads slowed them by far more than the filler's CPU: a block
// faulted in page by page (256 faults, about 3 ms on a VM) stalled the
// process's other threads, and a 0.04 ms query that met one took 1-5 ms;
// paced at one block per 50 ms, a steady stream of such queries still
// met one every 50 ms. A block's pages are also populated in one madvise
// call where the kernel can (MADV_POPULATE_WRITE, Linux 5.14; about
// 0.2 ms a block), so a read that begins while a block is being made
// waits less.
//
// A row that finds the reserve empty is read as if uncached (a head row
// from its encoded snapshot, a stored row into the reader's buffer), and
// a later read admits it: a cold burst larger than the reserve does not
// fault in its overflow. Reads that do not stop for reserveQuiet would
// then admit nothing, and a dashboard's repeated queries would decode
// their rows every time (groupby-12h's mean doubled with rows in the
// store), so once the reserve has been empty for reserveStarved, new
// entries come from the heap, faults and all, as without a reserve, until
// the filler makes a block again.
//
// An entry's points are a slice of its block, so a block is freed once
// every entry carved from it is evicted and no reader holds one; entries
// of one block enter the cache together and mostly age out together.
type reserve struct {
	mu      sync.Mutex
	cur     []series.Point   // the block being carved: cur[len:cap] is free
	ready   [][]series.Point // blocks faulted in, not carved yet
	depth   int
	filling bool
	taken   time.Time      // when a read last took a block or found none
	empty   time.Time      // when a read first found none since a block was made; zero while blocks come
	starved time.Duration  // reserveStarved; tests shorten it
	wg      sync.WaitGroup // the filler

	// began is when a read last began, as nanoseconds since epoch
	// (reading); atomic, since every read sets it without the lock.
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
	// reserveQuiet is how long no read may have begun or asked for a
	// block before the filler makes blocks.
	reserveQuiet = 20 * time.Millisecond
	// reserveStarved is how long reads may find the reserve empty before
	// new entries come from the heap.
	reserveStarved = 50 * time.Millisecond
)

// newReserve returns a reserve of about bytes, its filler started, or nil
// (entries come from the heap as they are made) when bytes is not
// positive.
func newReserve(bytes int64) *reserve {
	if bytes <= 0 {
		return nil
	}
	rs := &reserve{depth: int(max(1, bytes/(reserveBlock*pointBytes))), starved: reserveStarved}
	rs.mu.Lock()
	rs.fillLocked()
	rs.mu.Unlock()
	return rs
}

// alloc returns an empty slice with room for n points, from resident
// memory when it can; nil when the reserve has none ready, which starts
// the filler, or from the heap once it has had none for rs.starved. A row
// of more than a quarter block comes from the heap, so that a block is
// not left mostly unused.
func (rs *reserve) alloc(n int) []series.Point {
	if rs == nil || n > reserveBlock/4 {
		return make([]series.Point, 0, n)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cap(rs.cur)-len(rs.cur) < n {
		now := time.Now()
		rs.taken = now
		if len(rs.ready) == 0 {
			rs.fillLocked()
			if rs.empty.IsZero() {
				rs.empty = now
			}
			if now.Sub(rs.empty) >= rs.starved {
				return make([]series.Point, 0, n)
			}
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

// reading records that a read began: the filler waits for reads to stop.
func (rs *reserve) reading() {
	if rs != nil {
		rs.began.Store(int64(time.Since(epoch)))
	}
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

// fill adds blocks, each once reads have stopped for reserveQuiet, until
// depth are ready, then ends.
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
		populate(b)
		rs.mu.Lock()
		rs.ready, rs.empty = append(rs.ready, b), time.Time{}
		if len(rs.ready) >= rs.depth {
			rs.filling = false
			rs.mu.Unlock()
			return
		}
		rs.mu.Unlock()
	}
}

// waitLocked returns how long the filler must still wait at now before
// it makes a block: until reserveQuiet has passed since a read last began
// or asked for a block. The caller holds rs.mu.
func (rs *reserve) waitLocked(now time.Time) time.Duration {
	last := max(rs.taken.Sub(epoch), time.Duration(rs.began.Load()))
	return reserveQuiet - (now.Sub(epoch) - last)
}

// populate faults b's pages in here, not in a query: the whole pages in
// one call where the kernel can (populateBlock), the rest by a write to
// each page.
func populate(b []series.Point) {
	for i := populateBlock(b); i < len(b); i += touchStride {
		b[i].T = 1
	}
	if len(b) > 0 {
		b[len(b)-1].T = 1 // the last page, which the stride may step over
	}
}
