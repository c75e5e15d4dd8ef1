package read

import (
	"syscall"
	"unsafe"

	"github.com/tsd-db/tsd/series"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault a range's
// pages in, writable, in one call. syscall does not name it.
const madvPopulateWrite = 23

// populateBlock populates the whole pages at the start of b with one
// madvise call and returns how many of b's points they hold (0 when the
// kernel refuses: before 5.14 it answers EINVAL). populate writes every
// page after it either way, so only the tests read the count. A block is
// a large heap object, so it starts on a page boundary.
func populateBlock(b []series.Point) int {
	const page = 4096
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%page != 0 {
		return 0
	}
	n := len(b) * pointBytes / page * page
	if n == 0 {
		return 0
	}
	if syscall.Madvise(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n), madvPopulateWrite) != nil {
		return 0
	}
	return n / pointBytes
}
