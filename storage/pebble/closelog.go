package pebble

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// Pebble keeps disk space for its log that a stopped store does not need:
// each new log file is preallocated to 110 % of MemTableSize (blocks
// allocated past the end of the file, which du counts), and up to
// MemTableStopWritesThreshold+1 obsolete log files are kept whole to be
// renamed into the next logs. With the default 32 MiB memtables that is
// about 36 MiB a file, five files after a day of ingest, against a few MiB
// of compressed data. A clean Close gives it back:
//
//  1. logFS.closing is set, so from here on no log file is preallocated
//     and a log about to be recycled is replaced by a new empty file.
//  2. The memtables are flushed. The flush starts a new log (a small, new
//     file by step 1) and, once the flushed sstables are in the manifest,
//     every older log is obsolete: pebble's manifest says replay starts at
//     the new log.
//  3. Pebble closes; its log ends with its EOF trailer, synced.
//  4. Every log file numbered below the newest one is removed, the newest
//     too when it holds no record, and the directory synced. The older
//     ones are exactly the files pebble's next Open would find below the
//     manifest's first unflushed log and delete as obsolete; an empty
//     newest one it would only replay to nothing and then start a new
//     one. None holds a write that is not in an sstable. Every manifest
//     but the one pebble's marker file names goes too: pebble keeps the
//     previous one for debugging, a block of disk for nothing.
//
// A crash at any point leaves a store pebble opens with every acknowledged
// write (TestCloseCrashEveryStep): before the flush's manifest edit the
// logs replay as usual, after it the removed files were obsolete. If the
// flush fails or is not tried (disk low or full, a read-only engine),
// step 4 is skipped and the logs stay for the next Open to replay.

// logFS is the filesystem pebble opens the store with: o.FS, with the log
// space of a closing store kept to what the log holds.
type logFS struct {
	vfs.FS
	// closing is set by Close before its final flush.
	closing atomic.Bool
}

func isLogName(name string) bool { return strings.HasSuffix(name, ".log") }

// Create wraps log files so their preallocation can be turned off.
func (fs *logFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !isLogName(name) {
		return f, err
	}
	return &logFile{File: f, fs: fs}, nil
}

// ReuseForWrite renames an obsolete log into a new one, as pebble asks,
// except while closing: then the old file, whose whole length stays
// allocated when renamed, is removed and the new log starts empty. Pebble
// only recycles logs that are already obsolete, so losing the old file to a
// crash between the two steps loses nothing.
func (fs *logFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if fs.closing.Load() {
		// A file that cannot be removed is left for pebble's next Open,
		// which deletes obsolete logs; the new log is made anyway.
		_ = fs.FS.Remove(oldname)
		return fs.Create(newname, category)
	}
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return f, err
	}
	return &logFile{File: f, fs: fs}, nil
}

// Unwrap returns the filesystem logFS wraps.
func (fs *logFS) Unwrap() vfs.FS { return fs.FS }

// logFile is a pebble log file whose preallocation stops once the store is
// closing.
type logFile struct {
	vfs.File
	fs *logFS
}

func (f *logFile) Preallocate(offset, length int64) error {
	if f.fs.closing.Load() {
		return nil
	}
	return f.File.Preallocate(offset, length)
}

// flushForClose is steps 1 and 2 of a clean close, with d.opMu held
// exclusively so no write follows the flush. It reports whether the logs
// below the newest may be removed once pebble is closed.
func (d *DB) flushForClose() bool {
	e := d.eng
	if e == nil || e.pdb == nil || e.readOnly || d.space.refuse.Load() != nil {
		return false // a store short of disk keeps its logs as they are
	}
	d.logFS.closing.Store(true)
	if err := e.pdb.Flush(); err != nil {
		d.opts.Logger.Warn("flush pebble before close: the logs stay for the next open to replay",
			"dir", d.dir, "err", err)
		return false
	}
	return d.space.full.Load() == nil
}

// removeObsoleteFiles is step 4 of a clean close, after pebble has closed
// and before the directory lock is released.
func (d *DB) removeObsoleteFiles() error {
	fs := d.opts.FS
	names, err := fs.List(d.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", d.dir, err)
	}
	type logNum struct {
		name string
		num  uint64
	}
	var logs []logNum
	for _, name := range names {
		num, ok := parseLogName(name)
		if ok {
			logs = append(logs, logNum{name, num})
		}
	}
	obsolete := obsoleteManifests(names)
	slices.SortFunc(logs, func(a, b logNum) int { return cmp.Compare(a.num, b.num) })
	for _, l := range logs[:max(len(logs)-1, 0)] {
		obsolete = append(obsolete, l.name)
	}
	if len(logs) > 0 {
		newest := logs[len(logs)-1]
		empty, err := emptyLog(fs, fs.PathJoin(d.dir, newest.name), newest.num)
		if err != nil {
			return err
		}
		if empty {
			obsolete = append(obsolete, newest.name)
		}
	}
	if len(obsolete) == 0 {
		return nil
	}
	for _, name := range obsolete {
		if err := fs.Remove(fs.PathJoin(d.dir, name)); err != nil {
			return fmt.Errorf("remove obsolete file: %w", err)
		}
	}
	return durable.SyncDir(fs, d.dir)
}

// emptyLog reports whether the log at path holds no record and ends with
// its EOF trailer: what pebble leaves after a clean close, a block of disk
// its next Open does not need, since it starts a new log anyway.
func emptyLog(fs vfs.FS, path string, num uint64) (bool, error) {
	data, err := readFile(fs, path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	recs, damaged, err := readLog(data, num, true)
	return err == nil && len(recs) == 0 && len(damaged) == 0, nil
}

// obsoleteManifests returns the manifests in names other than the one
// pebble's marker file ("marker.manifest.<iteration>.<manifest name>")
// names; none when there is not exactly one marker.
func obsoleteManifests(names []string) []string {
	var current string
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, "marker.manifest.")
		if !ok {
			continue
		}
		_, m, ok := strings.Cut(rest, ".")
		if !ok || current != "" {
			return nil
		}
		current = m
	}
	var obsolete []string
	for _, name := range names {
		num, ok := strings.CutPrefix(name, "MANIFEST-")
		if ok && current != "" && name != current && isDigits(num) { // not MANIFEST-N.damaged
			obsolete = append(obsolete, name)
		}
	}
	return obsolete
}

// parseLogName reads the number of a pebble log file name, "000123.log".
func parseLogName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, ".log")
	if !ok || base == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(base, 10, 64)
	return n, err == nil
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
