package read

import (
	"fmt"
	"syscall"
	"testing"
	"unsafe"

	"github.com/tsd-db/tsd/series"
)

// TestPopulateFaultsBlocks: populateBlock makes every whole page of a
// block resident in one call, before populate writes to each: the block's
// pages are dropped first (MADV_DONTNEED), and mincore counts them after.
func TestPopulateFaultsBlocks(t *testing.T) {
	b := make([]series.Point, reserveBlock)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)*pointBytes)
	whole := mem[:len(mem)/4096*4096]
	if err := syscall.Madvise(whole, syscall.MADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, &whole[0], len(whole)); n != 0 {
		t.Fatalf("%d pages resident after MADV_DONTNEED, want 0", n)
	}
	n := populateBlock(b)
	if n == 0 && !kernelAtLeast(t, 5, 14) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14); the filler writes to each page")
	}
	if want := len(whole) / pointBytes; n != want {
		t.Fatalf("populateBlock covered %d points, want the block's whole pages, %d", n, want)
	}
	if got, want := resident(t, &whole[0], len(whole)), len(whole)/4096; got != want {
		t.Fatalf("%d of %d pages resident after populateBlock", got, want)
	}
	populate(b)
	// And the page the block ends in, which it fills in part.
	pages := (len(mem) + 4095) / 4096
	if got := resident(t, &mem[0], pages*4096); got != pages {
		t.Fatalf("%d of %d pages resident after populate", got, pages)
	}
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor.
func kernelAtLeast(t *testing.T, major, minor int) bool {
	t.Helper()
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	var ma, mi int
	if _, err := fmt.Sscanf(string(rel), "%d.%d", &ma, &mi); err != nil {
		t.Fatalf("kernel release %q: %v", rel, err)
	}
	return ma > major || ma == major && mi >= minor
}

// resident counts the pages in memory (mincore) of the n bytes at p,
// which starts a page. Only the kernel reads past what p points into, so
// n may reach the end of the page its memory ends in.
func resident(t *testing.T, p *byte, n int) int {
	t.Helper()
	vec := make([]byte, (n+4095)/4096)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(p)), uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return in
}
