package read

import (
	"sync"
	"time"

	"github.com/tsd-db/tsd/series"
)

// reserve hands the row cache memory for new entries that is already
// resident. A cold read (the first after a bulk load or a restart) would
// otherwise decode every row it meets into fresh memory, and a fresh page
// is what such a read spends its time on: on a VM a page fault costs
// about 12 µs, more than decoding the 360 points that fill two pages.
// Entries are carved from blocks a filler goroutine allocates and touches
// beforehand, off the query's path, keeping up to depth blocks ready once
// the first read asked for one (a daemon that only ingests keeps none); a
// row that finds the reserve empty is read as if uncached (a head row
// from its encoded snapshot, a stored row into the reader's buffer), and
// a later read admits it. The memory kept ready is Options.RowCacheReserve.
// While reads take blocks, the filler makes one per reservePace, and at
// full speed once they stop for reserveQuiet: its page faults would
// otherwise take the CPU from the cold read that emptied the reserve.
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
	taken   time.Time      // when a read last took a block or found none
	made    time.Time      // when the filler last made one
	wg      sync.WaitGroup // the filler
}

const (
	// reserveBlock is a reserve block's size in points (1 MiB).
	reserveBlock = (1 << 20) / pointBytes
	// touchStride is the points between two writes that fault a block's
	// pages in (one a 4 KiB page).
	touchStride = 4096 / pointBytes
	// reserveQuiet is how long no read may have taken a block before the
	// filler makes them at full speed, and reservePace the time between
	// two blocks before that: a 1 MiB block is 256 faults, about 3 ms on
	// a VM, so a server never quiet for long still fills its cache at
	// 20 MiB/s for some 6% of a core.
	reserveQuiet = 20 * time.Millisecond
	reservePace  = 50 * time.Millisecond
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
		rs.taken = time.Now()
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
		wait := min(reserveQuiet-time.Since(rs.taken), reservePace-time.Since(rs.made))
		rs.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
			continue
		}
		b := make([]series.Point, reserveBlock)
		for i := 0; i < len(b); i += touchStride {
			b[i].T = 1 // fault the page in here, not in a query
		}
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
