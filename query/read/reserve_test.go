package read

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

	"github.com/tsd-db/tsd/series"
)

// TestReserveCarves: an empty reserve admits nothing and starts its
// filler, which stops at its depth; entries are then carved from touched
// blocks without overlapping, a block is replaced when it runs out, and a
// row too large for a block comes from the heap.
func TestReserveCarves(t *testing.T) {
	rs := newReserve(3 * reserveBlock * pointBytes)
	if rs.depth != 3 {
		t.Fatalf("depth %d, want 3", rs.depth)
	}
	if got := rs.alloc(360); got != nil {
		t.Fatalf("an empty reserve gave %d points of room", cap(got))
	}
	rs.wait()
	if got, want := rs.readyBytes(), int64(3*reserveBlock*pointBytes); got != want {
		t.Fatalf("%d bytes ready after the fill, want %d", got, want)
	}
	a, b := rs.alloc(360), rs.alloc(100)
	if len(a) != 0 || cap(a) != 360 || cap(b) != 100 {
		t.Fatalf("room %d/%d and %d/%d, want 0/360 and 0/100", len(a), cap(a), len(b), cap(b))
	}
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

// TestReservePace: the filler makes a block reservePace after the last
// one, whether reads go on or not.
func TestReservePace(t *testing.T) {
	rs := newReserve(reserveBlock * pointBytes) // no filler runs before the first alloc
	now := time.Now()
	rs.made = now
	rs.reading()
	if w := rs.waitLocked(now); w != reservePace {
		t.Fatalf("a block was just made: the filler waits %v, want %v", w, reservePace)
	}
	if w := rs.waitLocked(now.Add(reservePace / 2)); w != reservePace/2 {
		t.Fatalf("a block was made %v ago: the filler waits %v, want %v", reservePace/2, w, reservePace/2)
	}
	if w := rs.waitLocked(now.Add(reservePace)); w > 0 {
		t.Fatalf("a block was made %v ago: the filler waits %v, want 0", reservePace, w)
	}
}

// TestPopulateWritesEveryPage: after populate, every 4 KiB page of a
// block holds data, not only zeros. A page that was populated but never
// written cost a fault at its first write on the machines tsd is measured
// on, which a query copying an entry in then paid.
func TestPopulateWritesEveryPage(t *testing.T) {
	b := make([]series.Point, reserveBlock)
	populate(b)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)*pointBytes)
	for off := 0; off < len(mem); off += 4096 {
		page := mem[off:min(off+4096, len(mem))]
		if bytes.Count(page, []byte{0}) == len(page) {
			t.Fatalf("page at byte %d of the block holds only zeros after populate", off)
		}
	}
}

// TestReservePiecePauses: a block the filler is making pauses between
// pieces when a read began after the block, until the block has taken
// reservePace; a read begun before the block does not pause it.
func TestReservePiecePauses(t *testing.T) {
	rs := newReserve(reserveBlock * pointBytes)
	start := time.Now()
	if w := rs.pieceWait(start, start.Add(reservePace/4)); w != 0 {
		t.Fatalf("no read ever: the filler waits %v, want 0", w)
	}
	rs.reading() // began after start
	if w := rs.pieceWait(start, start.Add(reservePace/4)); w != reservePace*3/4 {
		t.Fatalf("a read began: the filler waits %v, want %v", w, reservePace*3/4)
	}
	if w := rs.pieceWait(start, start.Add(reservePace)); w != 0 {
		t.Fatalf("the block began %v ago: the filler waits %v, want 0", reservePace, w)
	}
	if w := rs.pieceWait(time.Now().Add(time.Millisecond), time.Now().Add(time.Millisecond)); w != 0 {
		t.Fatalf("the read began before the block: the filler waits %v, want 0", w)
	}
	// Pieces are whole pages, so every piece starts on a page.
	if reservePiece*pointBytes%4096 != 0 || reservePiece >= reserveBlock {
		t.Fatalf("a piece of %d points is not whole pages within a block", reservePiece)
	}
}
