package flush

import "github.com/cockroachdb/pebble/v2/vfs"

// writeFileAtomic replaces dir/name with data so that after a crash the file
// holds either its old content or data: write a temporary file, sync it,
// rename it over the old one, sync the directory.
func writeFileAtomic(fs vfs.FS, dir, name string, data []byte) error {
	tmp := fs.PathJoin(dir, name+".tmp")
	f, err := fs.Create(tmp, vfs.DiskWriteCategory("tsd-"+name))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, fs.PathJoin(dir, name))
	}
	if err == nil {
		err = syncDir(fs, dir)
	}
	return err
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirDurable creates dir if it is missing and syncs its parent, so the
// directory survives a crash with what is synced into it.
func mkdirDurable(fs vfs.FS, dir string) error {
	if _, err := fs.Stat(dir); err == nil {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return syncDir(fs, fs.PathDir(dir))
}
