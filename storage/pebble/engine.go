package pebble

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/internal/durable"
	"github.com/tsd-db/tsd/storage"
)

// engine is one opening of pebble on the store's directory. The DB opens
// pebble read-only when its disk is full (a read-write open would replay
// the log into a new sstable the disk cannot hold) and again read-write
// once space is back (space.go), so it may go through several engines;
// only one is open at a time, since they share the directory lock.
type engine struct {
	pdb      *pebble.DB // nil when the last reopen failed to open pebble at all
	readOnly bool
	// refs counts the DB's own reference while the engine is current, plus
	// one per open scanner on it; pebble closes when it drops to zero.
	refs atomic.Int64
	// retired is set when the engine stops being current (Close, or a
	// reopen): new calls stop using it and its scanners end at their next
	// Next, so its refs drain.
	retired atomic.Bool
	// final is set by Close: the directory lock goes with this engine.
	final atomic.Bool
}

func newEngine(pdb *pebble.DB, readOnly bool) *engine {
	e := &engine{pdb: pdb, readOnly: readOnly}
	e.refs.Store(1)
	return e
}

// errReopening is what a call meets while the store swaps pebble openings
// (a few milliseconds, unless a scanner is slow to end) or after pebble
// failed to open again; the same call succeeds once it is done.
var errReopening = storage.MarkRetryable(errors.New("storage: pebble is being reopened"))

// ref takes a reference on the current engine for a scanner; the caller
// is inside enter.
func (d *DB) ref() *engine {
	e := d.eng
	e.refs.Add(1)
	return e
}

// unref drops a reference on e and closes its pebble with the last one;
// the final engine also releases the directory lock and reports Close's
// error.
func (d *DB) unref(e *engine) {
	if e.refs.Add(-1) != 0 {
		return
	}
	var err error
	if e.pdb != nil {
		err = e.pdb.Close()
	}
	if !e.final.Load() {
		if err != nil { // after a full disk pebble's log writer keeps its error
			d.opts.Logger.Debug("close pebble for a reopen", "dir", d.dir, "err", err.Error())
		}
		return
	}
	if err == nil && d.closeFlushed.Load() {
		if rerr := d.removeObsoleteFiles(); rerr != nil {
			// The store is intact; pebble's next Open deletes them.
			d.opts.Logger.Warn("remove obsolete pebble logs and manifests", "dir", d.dir, "err", rerr)
		}
	}
	if lerr := d.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		err = fmt.Errorf("close pebble store %s: %w", d.dir, err)
		d.opts.Logger.Error("close pebble store", "dir", d.dir, "err", err)
	}
	d.closeErr <- err
}

// drainWait bounds how long a reopen waits for the scanners of the old
// engine to end; past it the reopen is given up and tried again later.
const drainWait = 30 * time.Second

// reopen replaces the current engine with a new opening of pebble,
// read-only or not. It first retires the current one: calls that begin
// meanwhile fail at once with errReopening (rather than wait, since a
// caller may hold a scanner the reopen waits for) and open scanners end at
// their next Next; then, with no scanner left, it closes pebble and opens
// it again. A read-write open that fails falls back to read-only so reads
// go on; if pebble does not open at all, calls fail with errReopening until
// a later reopen succeeds. The space monitor is its only caller.
func (d *DB) reopen(readOnly bool) error {
	old, err := d.retire()
	if err != nil {
		return err
	}
	if !waitDrained(old, drainWait) {
		d.opMu.Lock()
		old.retired.Store(false)
		d.opMu.Unlock()
		return fmt.Errorf("reopen pebble store %s: scanners still open after %v", d.dir, drainWait)
	}
	d.opMu.Lock()
	defer d.opMu.Unlock()
	d.unref(old) // the last reference: pebble closes
	if !readOnly {
		// A full disk reported from here on is the new opening's; a
		// read-only one writes nothing, and the report stays the reason.
		d.space.full.Store(nil)
	}
	eng, err := d.openEngine(readOnly)
	if err != nil && !readOnly {
		d.opts.Logger.Warn("reopen pebble store read-write failed; opening it read-only", "dir", d.dir, "err", err)
		eng, err = d.openEngine(true)
	}
	if err != nil {
		eng = newEngine(nil, true)
		eng.retired.Store(true)
	}
	d.eng, d.pdb = eng, eng.pdb
	d.space.reopens.Add(1)
	return err
}

// retire marks the current engine retired and empties the iterator pool,
// whose iterators belong to it.
func (d *DB) retire() (*engine, error) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	if d.closed.Load() {
		return nil, storage.ErrClosed
	}
	old := d.eng
	old.retired.Store(true)
	// A generation step makes every iterator in flight stale, so none of
	// the old engine's goes back to the pool.
	d.beginWrite()
	d.endWrite()
	d.iters.dropStale(noGen)
	return old, nil
}

// waitDrained waits until only the DB's own reference on e is left.
func waitDrained(e *engine, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for e.refs.Load() > 1 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// openEngine opens pebble on the directory. The caller holds opMu
// exclusively (or is Open).
func (d *DB) openEngine(readOnly bool) (*engine, error) {
	po := d.opts.pebbleOptions(d.lock, d)
	po.ReadOnly = readOnly
	d.listenForDamage(po)
	d.listenForStalls(po)
	d.listenForManifest(po)
	po.DisableAutomaticCompactions = d.repair
	// Pebble retries loading a table's statistics at once and forever when
	// the table cannot be opened, one background error each time: with such
	// a table, or for a repair, statistics are off.
	po.DisableTableStats = d.repair || d.unreadableTable(po)
	pdb, err := d.openPebble(po, readOnly)
	if err != nil {
		return nil, err
	}
	d.po = po
	return newEngine(pdb, readOnly), nil
}

// logsBehind reports whether the store desc describes (pebble.Peek's,
// nil when Peek failed) is at a pebble format before FormatWALSyncChunks,
// or new: pebble then writes the log of its open without the sync chunks
// that tell a damaged record from the torn end of a crash
// (logsalvage.go).
func logsBehind(desc *pebble.DBDesc) bool {
	return desc != nil && desc.FormatMajorVersion < pebble.FormatWALSyncChunks
}

// openPebble opens pebble on d's directory, unless its MANIFEST is damaged
// where pebble would not see it and its copy cannot mend it (vetManifest),
// and mends, unless read-only, what would keep it shut: a damaged OPTIONS
// file is set aside (pebble writes a new one; the MANIFEST still names the
// comparer it checks), a damaged log is salvaged (logsalvage.go). A store
// whose log this open started without sync chunks is opened again
// (logsBehind).
func (d *DB) openPebble(po *pebble.Options, readOnly bool) (*pebble.DB, error) {
	desc, err := pebble.Peek(d.dir, po.FS)
	if err != nil {
		desc = nil // pebble's open reports it
	}
	if err := d.vetManifest(desc, readOnly); err != nil {
		return nil, err
	}
	behind := !readOnly && logsBehind(desc)
	pdb, err := pebble.Open(d.dir, po)
	for range 3 { // one mend of each kind, and a margin
		if err == nil || readOnly {
			break
		}
		mended, merr := d.mendOpen(po, err)
		if merr != nil {
			return nil, openError(d.dir, po, fmt.Errorf("%w; mending it failed: %w", err, merr))
		}
		if !mended {
			break
		}
		pdb, err = pebble.Open(d.dir, po)
	}
	if err == nil && behind {
		// Pebble started this open's log before it raised the store to its
		// newest format (always so for a new store), so that log has no
		// sync chunks and its damage would pass for its end: open again.
		if err = pdb.Close(); err == nil {
			pdb, err = pebble.Open(d.dir, po)
		}
	}
	if err != nil {
		return nil, openError(d.dir, po, err)
	}
	return pdb, nil
}

// mendOpen mends the damage err, pebble's open failure, reports, if it is
// one openPebble mends; it reports whether it changed anything.
func (d *DB) mendOpen(po *pebble.Options, err error) (bool, error) {
	if path := damagedOptionsFile(d.dir, po); path != "" {
		return true, d.setAsideOptions(path, err)
	}
	if !isLogDamage(err) {
		return false, nil
	}
	salvaged, serr := d.salvageLogs()
	d.salvagedMu.Lock()
	d.salvaged = append(d.salvaged, salvaged...)
	d.salvagedMu.Unlock()
	return len(salvaged) > 0, serr
}

// setAsideOptions renames the damaged OPTIONS file at path to
// path.damaged, which pebble ignores, so that pebble's open writes a new
// one.
func (d *DB) setAsideOptions(path string, cause error) error {
	fs := d.opts.FS
	if err := fs.Rename(path, path+".damaged"); err != nil {
		return fmt.Errorf("set aside %s: %w", path, err)
	}
	if err := durable.SyncDir(fs, d.dir); err != nil {
		return err
	}
	d.opts.Logger.Error("pebble options file damaged: set aside, pebble writes a new one",
		"file", path, "kept", path+".damaged", "err", cause.Error())
	return nil
}
