package diskfull

import (
	"os"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS is a vfs.FS whose free space and write budget the test controls. Its
// zero figures are 0 bytes available and a spent budget: call SetAvail and
// SetBudget (New sets a roomy disk).
type FS struct {
	vfs.FS
	avail  atomic.Int64
	budget atomic.Int64 // bytes writes may add; negative is unlimited
	// enospc counts the writes and creations refused.
	enospc atomic.Int64
}

// Roomy is the free space New reports: far above any minimum a test sets.
const Roomy = 1 << 40

// New wraps fs with Roomy bytes reported free and an unlimited budget.
func New(fs vfs.FS) *FS {
	d := &FS{FS: fs}
	d.avail.Store(Roomy)
	d.budget.Store(-1)
	return d
}

// SetAvail sets the free space GetDiskUsage reports.
func (d *FS) SetAvail(n int64) { d.avail.Store(n) }

// SetBudget sets how many more bytes writes may add; negative is unlimited.
func (d *FS) SetBudget(n int64) { d.budget.Store(n) }

// Fill makes the disk full: nothing more fits and avail bytes are reported
// free (a full disk reports 0, or the few blocks only root may use).
func (d *FS) Fill(avail int64) {
	d.SetBudget(0)
	d.SetAvail(avail)
}

// Free gives the disk room again: Roomy bytes free, unlimited budget.
func (d *FS) Free() {
	d.SetBudget(-1)
	d.SetAvail(Roomy)
}

// Refused returns how many writes and creations failed with ENOSPC.
func (d *FS) Refused() int64 { return d.enospc.Load() }

// take spends up to n bytes of the budget and returns how many fit.
func (d *FS) take(n int) int {
	for {
		b := d.budget.Load()
		if b < 0 {
			return n
		}
		k := min(int64(n), b)
		if d.budget.CompareAndSwap(b, b-k) {
			return int(k)
		}
	}
}

// GetDiskUsage reports Avail free on a disk of twice that size.
func (d *FS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	a := uint64(max(d.avail.Load(), 0))
	return vfs.DiskUsage{AvailBytes: a, TotalBytes: 2*a + 1<<20, UsedBytes: a + 1<<20}, nil
}

// Create fails with ENOSPC while the budget is spent.
func (d *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if d.budget.Load() == 0 {
		d.enospc.Add(1)
		return nil, noSpace("create", name)
	}
	f, err := d.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &file{File: f, d: d, name: name}, nil
}

// OpenReadWrite wraps the file so its writes spend the budget.
func (d *FS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := d.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &file{File: f, d: d, name: name}, nil
}

// ReuseForWrite wraps the reused file so its writes spend the budget.
func (d *FS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.ReuseForWrite(oldname, newname, c)
	if err != nil {
		return nil, err
	}
	return &file{File: f, d: d, name: newname}, nil
}

// Unwrap returns the wrapped file system.
func (d *FS) Unwrap() vfs.FS { return d.FS }

// file is a file whose writes spend its FS's budget.
type file struct {
	vfs.File
	d    *FS
	name string
}

func (f *file) Write(p []byte) (int, error) {
	k := f.d.take(len(p))
	n, err := f.File.Write(p[:k])
	if err == nil && k < len(p) {
		f.d.enospc.Add(1)
		err = noSpace("write", f.name)
	}
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	k := f.d.take(len(p))
	n, err := f.File.WriteAt(p[:k], off)
	if err == nil && k < len(p) {
		f.d.enospc.Add(1)
		err = noSpace("write", f.name)
	}
	return n, err
}

// Preallocate fails when length does not fit the budget, as fallocate
// does on a full disk; it spends nothing (the bytes are spent when
// written).
func (f *file) Preallocate(off, length int64) error {
	if b := f.d.budget.Load(); b >= 0 && b < length {
		f.d.enospc.Add(1)
		return noSpace("fallocate", f.name)
	}
	return f.File.Preallocate(off, length)
}

// noSpace is ENOSPC as the os package reports it ("write
// /data/000004.log: no space left on device").
func noSpace(op, path string) error { return &os.PathError{Op: op, Path: path, Err: syscall.ENOSPC} }
