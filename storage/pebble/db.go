package pebble

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
)

// DB is tsd's embedded wide-column store on one pebble database. It
// implements storage.DB and is safe for concurrent use.
type DB struct {
	// eng is the current opening of pebble and pdb its *pebble.DB; both
	// change only under opMu held exclusively (a reopen, engine.go), so a
	// call between enter and leave uses one opening throughout.
	eng *engine
	pdb *pebble.DB
	// po is the options of the current opening (openEngine), which repair
	// reads sstables with; repair opens with compactions and table
	// statistics off.
	po     *pebble.Options
	repair bool
	lock   *pebble.Lock
	opts   Options
	// logFS is opts.FS as pebble sees it (closelog.go).
	logFS *logFS
	// closeFlushed is set when Close has flushed every memtable, so the
	// logs below the newest are obsolete once pebble has closed.
	closeFlushed atomic.Bool
	dir          string
	wo           *pebble.WriteOptions

	// closed is set first thing in Close; operations check it after
	// taking opMu.RLock, so none touches pdb after Close returns.
	closed atomic.Bool
	// opMu is held shared by every call while it uses pdb, and exclusively
	// by Close and DropTable, which must see no call in flight.
	opMu sync.RWMutex

	// cat guards the table catalog. Lock order: opMu, then cat.
	cat struct {
		sync.Mutex
		tables map[string]*table
		nextID uint32
	}
	// closeErr receives pebble's close error when the final engine's last
	// reference goes (engine.unref): an engine counts the DB's reference
	// and one per open scanner, so a scanner's iterator never outlives
	// pebble and Next needs no lock to be safe against Close.
	closeErr chan error

	// space watches free disk space and pebble's full-disk reports
	// (space.go).
	space spaceState

	rows rowLocks

	// mirror is the MANIFEST copy's goroutine (manifestmirror.go), set
	// once open has loaded the catalog; pebble's event handlers read it.
	mirror atomic.Pointer[manifestMirror]
	// restoredManifests counts MANIFESTs mended from their copy.
	restoredManifests atomic.Int64

	// salvaged lists the damaged logs an open of pebble rewrote
	// (logsalvage.go); mendOpen appends, under salvagedMu.
	salvagedMu sync.Mutex
	salvaged   []SalvagedLog

	// damage records the damaged sstables pebble has reported.
	damage damage
	// stalls follows pebble's write stalls (stats.go).
	stalls stallStats

	// gen counts writes and iters keeps open iterators for reads to reuse
	// while no write has committed (iterpool.go).
	gen   writeGen
	iters iterPool

	gcStop chan struct{}
	gcWG   sync.WaitGroup
}

var _ storage.DB = (*DB)(nil)

// Open opens or creates the store in dir. Opening an existing store replays
// its log, so it recovers what was acknowledged before a crash. A directory
// locked by another process or holding damaged files is an error naming
// the file. With less than MinFreeBytes free, an existing store opens
// read-only (reads work, writes are refused until space comes back) and a
// new one is refused.
func Open(dir string, opts *Options) (*DB, error) { return open(dir, opts, false) }

// open is Open; for repair it leaves compactions and the collector off, so
// nothing but the repair reads the damaged files, and it keeps the catalog
// entries it could read when others are damaged.
func open(dir string, opts *Options, repair bool) (*DB, error) {
	o := *opts.EnsureDefaults()
	if repair {
		o.GCInterval = -1
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open pebble store: create %s: %w", dir, err)
	}
	lock, err := pebble.LockDirectory(dir, o.FS)
	if err != nil {
		return nil, fmt.Errorf("open pebble store: lock %s (held by another process?): %w",
			filepath.Join(dir, "LOCK"), err)
	}
	d := &DB{lock: lock, opts: o, dir: dir, wo: pebble.Sync, closeErr: make(chan error, 1)}
	d.logFS = &logFS{FS: o.FS}
	d.rows.seed = maphash.MakeSeed()
	d.iters.size = defaultIterPoolSize()
	d.space.free.Store(-1)
	if o.noSync {
		d.wo = pebble.NoSync
	}
	d.repair = repair
	if err := d.openFirst(); err != nil {
		lock.Close()
		return nil, err
	}
	if err := d.loadCatalog(); err != nil && !(repair && errors.Is(err, storage.ErrCorruption)) {
		d.pdb.Close()
		lock.Close()
		return nil, err
	}
	d.startGC()
	d.startSpaceWatch()
	d.startMirror()
	return d, nil
}

// openFirst opens pebble for Open: read-only when free space is under the
// minimum, since a read-write open replays the log into an sstable and
// waits for it, which a full disk never lets finish.
func (d *DB) openFirst() error {
	free, known := d.readFree()
	low := d.lowOn(free, known, false)
	var cause error
	if !low {
		if cause = d.probe(); cause != nil {
			low = true
		}
	}
	eng, err := d.openEngine(low)
	if err != nil && !low && (vfs.IsNoSpaceError(err) || d.space.full.Load() != nil) {
		// The disk filled between the probe and the open's own writes.
		low, cause = true, err
		eng, err = d.openEngine(true)
	}
	if low && errors.Is(err, pebble.ErrDBDoesNotExist) {
		return fmt.Errorf("open pebble store %s: no store to open read-only, and %s free is under min_free_bytes %s: %w",
			d.dir, formatBytes(free), formatBytes(d.opts.MinFreeBytes), storage.ReadOnly(errors.New("disk full")))
	}
	if err != nil {
		return err
	}
	d.eng, d.pdb = eng, eng.pdb
	if low {
		d.space.refuse.Store(d.refusalNow(free, true, cause))
		d.opts.Logger.Warn("pebble store opened read-only: free space under min_free_bytes", "dir", d.dir,
			"free_bytes", free, "min_free_bytes", d.opts.MinFreeBytes)
	}
	return nil
}

// openError wraps pebble's open failure. Pebble names a damaged manifest,
// log or sstable itself; an unreadable OPTIONS file it does not, so that
// file is checked again here to name it. Corruption keeps its class.
func openError(dir string, po *pebble.Options, err error) error {
	if path := badOptionsFile(dir, po, err); path != "" {
		err = fmt.Errorf("options file %s: %w", path, err)
	}
	if pebble.IsCorruptionError(err) || errors.Is(err, pebble.ErrCorruption) {
		return fmt.Errorf("open pebble store %s: %w: %w", dir, storage.ErrCorruption, err)
	}
	return fmt.Errorf("open pebble store %s: %w", dir, err)
}

// badOptionsFile returns the path of the store's newest OPTIONS file when
// it is the cause of err and err does not name it.
func badOptionsFile(dir string, po *pebble.Options, err error) string {
	path := damagedOptionsFile(dir, po)
	if path == "" || strings.Contains(err.Error(), po.FS.PathBase(path)) {
		return ""
	}
	return path
}

// damagedOptionsFile returns the path of the store's newest OPTIONS file
// when pebble cannot read it or takes it for another store's, else "".
// pebble.Peek gives the path already joined to dir.
func damagedOptionsFile(dir string, po *pebble.Options) string {
	desc, perr := pebble.Peek(dir, po.FS)
	if perr != nil || desc.OptionsFilename == "" {
		return ""
	}
	f, ferr := po.FS.Open(desc.OptionsFilename)
	if ferr != nil {
		return desc.OptionsFilename
	}
	defer f.Close()
	data, ferr := io.ReadAll(f)
	if ferr != nil || po.CheckCompatibility(dir, string(data)) != nil {
		return desc.OptionsFilename
	}
	return ""
}

// listenForDamage has pebble report damaged sstables to d rather than to
// its default handler, which calls Fatalf: the store keeps serving what it
// can read (DamagedFiles).
func (d *DB) listenForDamage(po *pebble.Options) {
	d.damage.logger = d.opts.Logger
	po.EventListener.DataCorruption = d.damage.note
	other := po.EventListener.BackgroundError
	po.EventListener.BackgroundError = func(err error) {
		if !d.damage.backgroundError(err) {
			other(err)
		}
	}
}

// DamagedFiles returns the damaged sstables the store has met since Open:
// reads of their key ranges fail with a *DamageError, and writes into them
// are refused with one. Pebble finds damage only where it reads, so a file
// appears once a read or a compaction has touched its damaged block.
func (d *DB) DamagedFiles() []DamagedFile { return d.damage.list() }

// FS returns the filesystem the store lives on.
func (d *DB) FS() vfs.FS { return d.opts.FS }

// Dir returns the directory the store was opened in.
func (d *DB) Dir() string { return d.dir }

// Metrics returns pebble's metrics (LSM shape, cache hits, write stalls),
// or nil after Close.
func (d *DB) Metrics() *pebble.Metrics {
	if d.enter() != nil {
		return nil
	}
	defer d.leave()
	return d.pdb.Metrics()
}

// enter marks a call in flight; it fails once Close has begun, and while
// pebble is being reopened.
func (d *DB) enter() error {
	d.opMu.RLock()
	if d.closed.Load() {
		d.opMu.RUnlock()
		return storage.ErrClosed
	}
	if d.eng.retired.Load() {
		d.opMu.RUnlock()
		return errReopening
	}
	return nil
}

// leave ends a call started by a successful enter.
func (d *DB) leave() { d.opMu.RUnlock() }

// Close stops the background collector, waits for calls in flight, flushes
// the memtables and closes pebble, leaving no log file but the newest, which
// holds nothing to replay. Later calls return storage.ErrClosed, and open scanners end
// with it at their next Next. If a scanner is still open, pebble and the
// directory lock are released when the last one is closed instead, and
// Close returns nil.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return storage.ErrClosed
	}
	d.stopGC()
	d.stopSpaceWatch()
	d.opMu.Lock()
	defer d.opMu.Unlock()
	// Pooled iterators go first: pebble refuses to close under open ones.
	if err := d.iters.close(); err != nil {
		d.opts.Logger.Error("close pooled iterator", "dir", d.dir, "err", err)
	}
	// A clean stop leaves no log space behind (closelog.go).
	d.closeFlushed.Store(d.flushForClose())
	d.stopMirror() // after the flush's MANIFEST edit, before the lock goes
	e := d.eng
	e.final.Store(true)
	e.retired.Store(true)
	d.unref(e)
	select {
	case err := <-d.closeErr:
		return err
	default:
		return nil
	}
}

// Compact runs the TTL and version collector now and then compacts the whole
// keyspace, so the space of deleted, dropped and expired data comes back.
//
// A store with a damaged sstable is not compacted (a *DamageError): the
// compaction would stop at it, and pebble v2.1.7 can panic later in a
// background goroutine when a failed manual compaction leaves another
// picked but cancelled.
func (d *DB) Compact(ctx context.Context) error {
	if files := d.damage.list(); len(files) > 0 {
		return fmt.Errorf("compact: %w: damaged sstable %s (%s): repair the store first (tsd repair)",
			storage.ErrCorruption, files[0].Path, files[0].Keys)
	}
	if err := d.collectGarbage(ctx); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.admit(true); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	err := d.compactAll(ctx)
	if err == nil {
		var moved bool
		if moved, err = d.rewriteMoved(); moved && err == nil {
			err = d.compactAll(ctx)
		}
	}
	// Pooled iterators pin the sstables the compaction replaced; closing
	// them lets pebble delete those files now rather than after the next
	// write.
	d.iters.dropStale(noGen)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// rewriteMoved makes the next compaction rewrite every bottom-level
// sstable written with another level's options: one pebble moved down
// whole because nothing below overlapped it keeps its codec, block size
// and filter, and pebble compacts a bottom-level file only when a file
// above overlaps it. For each such file it deletes a key inside the
// file's bounds that no write makes (its largest cell key less its last
// byte, which sorts just before it: a cell key ends in its 7-byte
// timestamp, so a key one byte shorter never parses); the deletion hides
// nothing, and the compaction that merges it into the file drops it, since
// nothing lies below the bottom level.
func (d *DB) rewriteMoved() (bool, error) {
	levels, err := d.pdb.SSTables(pebble.WithProperties())
	if err != nil {
		return false, fmt.Errorf("list sstables: %w", err)
	}
	want := recordedName(d.po.Levels[len(d.po.Levels)-1].Compression())
	b := d.pdb.NewBatch()
	defer b.Close()
	for _, f := range levels[len(levels)-1] {
		if f.Properties == nil || f.Properties.CompressionName == want {
			continue
		}
		k := f.Largest.UserKey
		if _, _, err := ParseCellKey(nil, k); err != nil {
			continue // a range deletion's end: leave the file
		}
		k = slices.Clone(k[:len(k)-1])
		if comparer.Compare(k, f.Smallest.UserKey) <= 0 {
			continue // one cell: nothing to gain
		}
		if err := b.Delete(k, nil); err != nil {
			return false, err
		}
	}
	if b.Empty() {
		return false, nil
	}
	return true, b.Commit(pebble.NoSync)
}

// compactAll flushes the memtables and compacts the whole keyspace into
// the bottom level.
func (d *DB) compactAll(ctx context.Context) error {
	if err := d.pdb.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return d.pdb.Compact(ctx, []byte{0}, []byte{0xFF}, true)
}

// nowMicros is the clock in whole milliseconds, expressed in microseconds.
func (d *DB) nowMicros() int64 {
	return d.opts.Clock().UnixMilli() * 1000
}

// readClock is the time a read of a table measures TTL against; tables
// without TTL never need it, so they skip the clock.
func (d *DB) readClock(st *tableState) int64 {
	if !st.hasTTL() {
		return 0
	}
	return d.nowMicros()
}
