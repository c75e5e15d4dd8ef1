//go:build unix

package du

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes of info's blocks (st_blocks counts 512-byte
// units on every unix).
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}
