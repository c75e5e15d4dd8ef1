package durable

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// WriteFile replaces path with data (see the package invariants); cat
// names the write in pebble's disk statistics.
func WriteFile(fs vfs.FS, path string, data []byte, cat vfs.DiskWriteCategory) error {
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, cat)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return SyncDir(fs, fs.PathDir(path))
}

// SyncDir syncs the directory dir, making the entries created, renamed
// or removed in it durable.
func SyncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
