package read

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/series"
)

// TestReserveCarves: a new reserve fills to its depth; entries are then
// carved from its blocks without overlapping, a block is replaced when it
// runs out, and a row too large for a block comes from the heap.
func TestReserveCarves(t *testing.T) {
	rs := newReserve(3 * reserveBlock * pointBytes)
	if rs.depth != 3 {
		t.Fatalf("depth %d, want 3", rs.depth)
	}
	rs.wait()
	if got, want := rs.readyBytes(), int64(3*reserveBlock*pointBytes); got != want {
		t.Fatalf("%d bytes ready after the fill, want %d", got, want)
	}
	a, b := rs.alloc(360), rs.alloc(100)
	if len(a) != 0 || cap(a) != 360 || cap(b) != 100 {
		t.Fatalf("room %d/%d and %d/%d, want 0/360 and 0/100", len(a), cap(a), len(b), cap(b))
	}
	rs.wait() // the block taken is replaced
	a = append(a, make([]series.Point, 360)...)
	b = append(b, series.IntPoint(1, 7))
	if a[359].T != 0 || b[0].T != 1 {
		t.Fatal("carved slices overlap")
	}
	if a = append(a, series.IntPoint(2, 2)); &a[0] == &b[0] {
		t.Fatal("growing a carved slice wrote into its neighbour")
	}
	// Use up the block in hand: the next alloc takes a ready block and
	// the filler makes one to replace it.
	for range 4 {
		rs.alloc(10_000) // 460 + 40,000 of the block's 43,690 points
	}
	if got := rs.alloc(reserveBlock / 8); got == nil {
		t.Fatal("no room with blocks ready")
	}
	rs.wait()
	if got, want := rs.readyBytes(), int64(4*reserveBlock-reserveBlock/8)*pointBytes; got != want {
		t.Fatalf("%d bytes ready after the refill, want %d", got, want)
	}
	if big := rs.alloc(reserveBlock); cap(big) != reserveBlock {
		t.Fatalf("a large row got %d points of room, want %d from the heap", cap(big), reserveBlock)
	}
	var none *reserve
	if got := none.alloc(5); got == nil || cap(got) != 5 {
		t.Fatal("without a reserve, room must come from the heap")
	}
}

// wait waits for the filler to end.
func (rs *reserve) wait() {
	if rs != nil {
		rs.wg.Wait()
	}
}

// readyBytes returns the bytes ready to carve.
func (rs *reserve) readyBytes() int64 {
	if rs == nil {
		return 0
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return int64(len(rs.ready)*reserveBlock+cap(rs.cur)-len(rs.cur)) * pointBytes
}

// TestReserveWaitsForReads: the filler makes a block only once no read
// has begun or asked for a block for reserveQuiet.
func TestReserveWaitsForReads(t *testing.T) {
	rs := newReserve(reserveBlock * pointBytes)
	rs.wait() // the filler ends once full; the checks below hold its lock in its stead
	now := time.Now()
	if w := rs.waitLocked(now); w > 0 {
		t.Fatalf("no read yet: the filler waits %v, want 0", w)
	}
	rs.reading()
	if w := rs.waitLocked(time.Now()); w <= reserveQuiet/2 {
		t.Fatalf("a read just began: the filler waits %v, want about %v", w, reserveQuiet)
	}
	if w := rs.waitLocked(time.Now().Add(reserveQuiet + time.Millisecond)); w > 0 {
		t.Fatalf("reads stopped %v ago: the filler waits %v, want 0", reserveQuiet, w)
	}
	rs.taken = now.Add(time.Hour)
	if w := rs.waitLocked(now.Add(time.Hour + time.Millisecond)); w <= 0 {
		t.Fatalf("a read asked for a block 1 ms ago: the filler waits %v, want more", w)
	}
}

// TestReserveStarvedFromHeap: reads that find the reserve empty read
// uncached until it has been empty for rs.starved, and then get room from
// the heap; a block the filler makes ends that.
func TestReserveStarvedFromHeap(t *testing.T) {
	rs := newReserve(reserveBlock * pointBytes)
	rs.wait()
	rs.mu.Lock()
	rs.starved = 5 * time.Millisecond
	rs.mu.Unlock()
	if got := rs.alloc(reserveBlock / 4); got == nil {
		t.Fatal("a full reserve gave no room")
	}
	for range 3 {
		rs.alloc(reserveBlock / 4)
	}
	if got := rs.alloc(reserveBlock / 4); got != nil {
		t.Fatal("an empty reserve gave room at once")
	}
	time.Sleep(2 * rs.starved)
	got := rs.alloc(100)
	if got == nil || cap(got) != 100 {
		t.Fatalf("a reserve empty for %v gave %v, want 100 points from the heap", 2*rs.starved, got)
	}
	rs.wait()
	rs.mu.Lock()
	empty := rs.empty
	rs.mu.Unlock()
	if !empty.IsZero() {
		t.Fatal("a block was made, but the reserve still counts as empty")
	}
	a := rs.alloc(100)
	if b := rs.alloc(100); a == nil || b == nil || &a[:1][0] == &b[:1][0] {
		t.Fatal("with a block ready, room must be carved from it")
	}
	if &a[:2][1] != &rs.cur[1] {
		t.Fatal("room did not come from the block in hand")
	}
}
