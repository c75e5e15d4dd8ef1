package wal

import (
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// faultFS is a real file system (a vfs.MemFS, usually) whose file writes,
// syncs and creations fail with ENOSPC while full is set, as a full disk
// does. A failing WriteAt first writes half its bytes, like a short write.
type faultFS struct {
	vfs.FS
	full atomic.Bool
}

func (fs *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.full.Load() {
		return nil, syscall.ENOSPC
	}
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: f, fs: fs}, nil
}

func (fs *faultFS) Unwrap() vfs.FS { return fs.FS }

type faultFile struct {
	vfs.File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.full.Load() {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if f.fs.full.Load() {
		return syscall.ENOSPC
	}
	return f.File.Sync()
}
