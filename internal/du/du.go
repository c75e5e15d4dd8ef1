package du

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// Allocated returns the bytes of the disk blocks allocated to the files
// under dir. A file removed while the walk runs is skipped.
func Allocated(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += allocated(info)
		return nil
	})
	return n, err
}
