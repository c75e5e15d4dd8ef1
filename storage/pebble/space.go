package pebble

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
)

// refusal is why the store refuses writes now (doc.go, "Disk space").
type refusal struct {
	err error // storage.ReadOnly(cause)
	// low says the only reason is free space under MinFreeBytes while
	// pebble is open read-write: the collector's deletions, which give
	// space back, still go through.
	low bool
}

// spaceState is the DB's disk-space watch: the refusal writes meet, the
// latest free-space reading and the counters behind SpaceStats.
type spaceState struct {
	refuse atomic.Pointer[refusal] // nil: writes go through
	free   atomic.Int64            // bytes available, -1 unknown
	// full is the first full-disk error pebble reported (diskFull) since
	// the last reopen; pebble's instance takes no write after it.
	full atomic.Pointer[error]

	refused, faults, reopens atomic.Int64

	wake chan struct{} // diskFull asks the watcher to act now
	stop chan struct{}
	wg   sync.WaitGroup
}

// SpaceStats describe the store's disk space and what it refused.
type SpaceStats struct {
	// FreeBytes is the space available on the store's file system at the
	// latest check, -1 when the file system does not report it.
	FreeBytes int64
	// MinFreeBytes is Options.MinFreeBytes.
	MinFreeBytes int64
	// ReadOnly is true while the store refuses writes.
	ReadOnly bool
	// Refused counts writes refused while read-only.
	Refused int64
	// DiskFull counts the full-disk errors pebble met (ENOSPC from a write
	// of its log, manifest or sstables), each of which made it read-only.
	DiskFull int64
	// Reopens counts the times pebble was opened again (read-only after a
	// full disk, read-write once space came back).
	Reopens int64
}

// SpaceStats returns the disk-space figures; safe at any time.
func (d *DB) SpaceStats() SpaceStats {
	return SpaceStats{
		FreeBytes: d.space.free.Load(), MinFreeBytes: d.opts.MinFreeBytes,
		ReadOnly: d.space.refuse.Load() != nil, Refused: d.space.refused.Load(),
		DiskFull: d.space.faults.Load(), Reopens: d.space.reopens.Load(),
	}
}

// WriteErr returns the error writes are refused with now (it matches
// storage.ErrReadOnly and names the cause), or nil while the store takes
// writes. It is one atomic load, for callers that want to refuse early.
func (d *DB) WriteErr() error {
	if r := d.space.refuse.Load(); r != nil {
		return r.err
	}
	return nil
}

// admit refuses a write while the store is read-only; deletes says the
// write only deletes (the collector), which a low disk still lets through.
func (d *DB) admit(deletes bool) error {
	r := d.space.refuse.Load()
	if r == nil || (deletes && r.low) {
		return nil
	}
	d.space.refused.Add(1)
	return r.err
}

// committed checks a commit that pebble returned from: pebble reports a
// full disk in its log to Fatalf, which returns (slogAdapter), after which
// pebble's commit returns no error though the batch is not durable; any
// full-disk report since the last reopen fails the commit, at worst one
// that was durable, never one that was not.
func (d *DB) committed(err error) error {
	if err != nil {
		return err
	}
	if full := d.space.full.Load(); full != nil {
		return storage.ReadOnly(fmt.Errorf("disk full: %w", *full))
	}
	return nil
}

// diskFull is told by pebble (its Fatalf, or a background error) that a
// write failed for a full disk. From now on every write is refused, and
// the watcher reopens pebble: its current instance has a write it could
// not finish and takes no more. It runs on pebble's goroutines, some
// holding pebble's locks, so it neither blocks nor calls pebble.
func (d *DB) diskFull(err error) {
	if d.space.full.CompareAndSwap(nil, &err) {
		d.space.faults.Add(1)
		d.opts.Logger.Error("pebble store: disk full, refusing writes", "dir", d.dir, "err", err)
	}
	d.space.refuse.Store(&refusal{err: storage.ReadOnly(fmt.Errorf("disk full: %w", err))})
	select {
	case d.space.wake <- struct{}{}:
	default:
	}
}

// readFree reads the space available on the store's file system; known is
// false when the file system does not say.
func (d *DB) readFree() (free int64, known bool) {
	u, err := d.opts.FS.GetDiskUsage(d.dir)
	if err != nil {
		d.space.free.Store(-1)
		return 0, false
	}
	free = int64(min(u.AvailBytes, 1<<62))
	d.space.free.Store(free)
	return free, true
}

// lowOn reports whether free is under the minimum; resuming takes an
// eighth more (was says the store refuses now), so a disk hovering at the
// limit does not flip the state at every check.
func (d *DB) lowOn(free int64, known, was bool) bool {
	min := d.opts.MinFreeBytes
	if !known || min <= 0 {
		return false
	}
	if was {
		min += min / 8
	}
	return free < min
}

// lowRefusal is the refusal for free space under the minimum.
func (d *DB) lowRefusal(free int64, readOnly bool) *refusal {
	cause := fmt.Errorf("disk: %s free in %s, under min_free_bytes %s", formatBytes(free), d.dir,
		formatBytes(d.opts.MinFreeBytes))
	return &refusal{err: storage.ReadOnly(cause), low: !readOnly}
}

// startSpaceWatch starts the goroutine that checks free space every
// FreeCheckInterval and acts on full-disk reports.
func (d *DB) startSpaceWatch() {
	d.space.wake = make(chan struct{}, 1)
	d.space.stop = make(chan struct{})
	d.space.wg.Add(1)
	go func() {
		defer d.space.wg.Done()
		t := time.NewTicker(d.opts.FreeCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-d.space.stop:
				return
			case <-t.C:
			case <-d.space.wake:
			}
			d.checkSpace()
		}
	}()
}

// stopSpaceWatch stops the watcher and waits for it (a reopen in progress
// included).
func (d *DB) stopSpaceWatch() {
	if d.space.stop != nil {
		close(d.space.stop)
		d.space.wg.Wait()
	}
}

// checkSpace is one round of the watcher. After a full disk pebble is
// reopened read-only: its opening has a write it could not finish, and a
// read-write open would replay the log into an sstable and wait for that
// flush until space is back. A read-only opening is reopened read-write
// once space is back and a probe confirms it. The refusal follows. While
// refusing it warns, at most a line a minute.
func (d *DB) checkSpace() {
	was := d.space.refuse.Load() != nil
	free, known := d.readFree()
	low := d.lowOn(free, known, was)
	ro, open := d.engineState()
	var cause error
	switch {
	case d.space.full.Load() != nil && !ro || !open && low:
		d.reopenLogged(true)
	case (ro || !open) && !low:
		if cause = d.probe(); cause == nil {
			d.reopenLogged(false)
		}
	}
	r := d.refusalNow(free, low, cause)
	d.space.refuse.Store(r)
	switch {
	case r != nil:
		d.opts.RateLog.Warn("disk.readonly", "", "store refusing writes", "dir", d.dir, "reason", r.err,
			"free_bytes", free, "min_free_bytes", d.opts.MinFreeBytes, "refused", d.space.refused.Load())
	case was:
		d.opts.Logger.Info("store takes writes again", "dir", d.dir, "free_bytes", free)
	}
}

// reopenLogged reopens pebble and logs the outcome.
func (d *DB) reopenLogged(readOnly bool) {
	err := d.reopen(readOnly)
	switch {
	case errors.Is(err, storage.ErrClosed):
	case err != nil:
		d.opts.Logger.Error("reopen pebble store", "dir", d.dir, "read_only", readOnly, "err", err)
	default:
		ro, _ := d.engineState()
		d.opts.Logger.Warn("reopened pebble store", "dir", d.dir, "read_only", ro)
	}
}

// refusalNow is the refusal that fits the state after a check; cause is a
// failed probe, if any.
func (d *DB) refusalNow(free int64, low bool, cause error) *refusal {
	if full := d.space.full.Load(); full != nil {
		return &refusal{err: storage.ReadOnly(fmt.Errorf("disk full: %w", *full))}
	}
	ro, open := d.engineState()
	switch {
	case cause != nil:
		return &refusal{err: storage.ReadOnly(fmt.Errorf("disk full: %w", cause))}
	case !open:
		return &refusal{err: storage.ReadOnly(errors.New("pebble could not be reopened; see the log"))}
	case low:
		return d.lowRefusal(free, ro)
	case ro:
		return &refusal{err: storage.ReadOnly(errors.New("pebble could not be reopened read-write; see the log"))}
	}
	return nil
}

// probeFile is the scratch file of probe, in the store's directory
// (pebble ignores files it did not name).
const probeFile = "tsd-space-probe"

// probeSlack is what probe reserves beyond pebble's logs: the new log,
// manifest and options files of an open.
const probeSlack = 4 << 20

// probe confirms that the disk has room for a read-write open, which
// writes about as much as pebble's logs hold into sstables: it reserves
// that much (fallocate, on Linux) in a scratch file and removes it. The
// free-space figure alone can mislead while another process fills the
// disk, and a read-write open that meets a full disk never returns. Only a
// full disk fails the probe; a file system that cannot reserve space
// passes it.
func (d *DB) probe() error {
	fs := d.opts.FS
	name := fs.PathJoin(d.dir, probeFile)
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err == nil {
		err = f.Preallocate(0, d.logBytes()+probeSlack)
		_ = f.Close()
	}
	_ = fs.Remove(name)
	if vfs.IsNoSpaceError(err) {
		return fmt.Errorf("reserve room to reopen pebble read-write: %w", err)
	}
	return nil
}

// logBytes sums the sizes of pebble's log files in the store's directory.
func (d *DB) logBytes() int64 {
	fs := d.opts.FS
	names, err := fs.List(d.dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		if fi, err := fs.Stat(fs.PathJoin(d.dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// engineState reports whether the current pebble opening is read-only
// and whether pebble is open at all (a failed reopen leaves none).
func (d *DB) engineState() (readOnly, open bool) {
	d.opMu.RLock()
	defer d.opMu.RUnlock()
	return d.eng.readOnly, d.eng.pdb != nil
}

// formatBytes writes n in the largest binary unit it reaches, one decimal.
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for (v >= 1024 || v <= -1024) && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
