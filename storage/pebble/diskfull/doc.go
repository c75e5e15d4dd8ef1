// Package diskfull simulates a disk that fills up, for tests of what tsd
// does on a full disk: FS wraps a vfs.FS (a vfs.MemFS, usually) and lets
// the test set the free space it reports and how many more bytes fit
// before writes fail with ENOSPC, as a real file system's do.
//
// Two figures, set independently, because a real disk can disagree with
// itself from the point of view of one process (another process fills it
// between two checks):
//
//   - Avail is what GetDiskUsage reports (the figure the store's free-space
//     watch reads).
//   - Budget is how many bytes file writes may still add before they fail
//     with syscall.ENOSPC; a write that does not fit writes what fits and
//     fails, a short write as a real disk's. Creating a file fails too while
//     the budget is spent, and so does reserving more than it (fallocate).
//     Negative is unlimited.
//
// Removing files, renaming them and reading are never refused, and removed
// bytes are not given back to the budget: the test says when space returns.
package diskfull
