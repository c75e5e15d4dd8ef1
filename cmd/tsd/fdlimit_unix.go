//go:build unix

package main

import "syscall"

// openFileLimit returns the process's limit of open descriptors
// (RLIMIT_NOFILE's soft value, which the Go runtime raises to the hard one
// at start), or 0 when it cannot be read.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
