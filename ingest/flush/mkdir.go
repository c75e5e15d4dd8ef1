package flush

import (
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// mkdirDurable creates dir if it is missing and syncs its parent, so the
// directory survives a crash with what is synced into it.
func mkdirDurable(fs vfs.FS, dir string) error {
	if _, err := fs.Stat(dir); err == nil {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return durable.SyncDir(fs, fs.PathDir(dir))
}
