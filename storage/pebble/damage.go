package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// DamagedFile is an sstable whose bytes do not match their checksums.
type DamagedFile struct {
	// Path is the file's path.
	Path string
	// Smallest and Largest bound the file's keys (pebble keys); Largest is
	// exclusive when LargestExclusive is set.
	Smallest, Largest []byte
	LargestExclusive  bool
	// Keys describes the bounds by table and row, for messages.
	Keys string
	// Err is the first corruption pebble reported in the file.
	Err error
	// logged is when a background job's stop at the file was last logged.
	logged time.Time
}

// overlaps reports whether [lo, hi] (hi exclusive when hiExcl) meets the
// file's key range.
func (f *DamagedFile) overlaps(lo, hi []byte, hiExcl bool) bool {
	if c := bytes.Compare(hi, f.Smallest); c < 0 || c == 0 && hiExcl {
		return false
	}
	c := bytes.Compare(lo, f.Largest)
	return c < 0 || c == 0 && !f.LargestExclusive
}

// DamageError is a read that met a damaged sstable, or a write refused
// because its keys fall in a damaged sstable's key range: such a write
// could not be compacted, and repairing the store removes that range.
// errors.Is(err, storage.ErrCorruption) holds; for a refused write
// storage.ErrRetryable holds too, as it may succeed once the store is
// repaired.
type DamageError struct {
	// File is the damaged sstable's path, Keys its key range.
	File, Keys string
	// Write marks a refused write.
	Write bool
	// Err is pebble's error, for a read.
	Err error
	// lo and hi are the file's key range.
	lo, hi []byte
}

func (e *DamageError) Error() string {
	if e.Write {
		return fmt.Sprintf("storage: write refused: its keys fall in the range of damaged sstable %s (%s) until the store is repaired (tsd repair)", e.File, e.Keys)
	}
	return fmt.Sprintf("storage: damaged sstable %s (%s): %s", e.File, e.Keys, shortError(e.Err))
}

// shortError is the first line of err's message: pebble's corruption
// errors carry a second line that only marks their details.
func shortError(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Unwrap returns the error classes and, for a read, pebble's error.
func (e *DamageError) Unwrap() []error {
	if e.Write {
		return []error{storage.ErrCorruption, storage.ErrRetryable}
	}
	return []error{e.Err, storage.ErrCorruption}
}

// damage records the damaged sstables the store has met. Pebble reports
// them (note) synchronously from read paths and compactions, so note only
// appends under its own lock and logs one line per file.
type damage struct {
	logger *slog.Logger
	// names maps table ids to names for messages; replaced, never changed,
	// when the catalog changes, so note reads it without the catalog lock.
	names atomic.Pointer[map[uint32]string]
	n     atomic.Int32 // len(files): writes check nothing while it is 0
	mu    sync.Mutex
	files []DamagedFile
}

// note records the file of a corruption pebble found, once per file.
func (dm *damage) note(info pebble.DataCorruptionInfo) {
	lo, hi := bytes.Clone(info.Bounds.Start), bytes.Clone(info.Bounds.End.Key)
	excl := !info.Bounds.End.IsUpperBoundFor(bytes.Compare, hi)
	f := DamagedFile{Path: info.Path, Smallest: lo, Largest: hi, LargestExclusive: excl,
		Keys: dm.describeRange(lo, hi), Err: info.Details}
	dm.mu.Lock()
	known := slices.ContainsFunc(dm.files, func(g DamagedFile) bool { return g.Path == f.Path })
	if !known {
		dm.files = append(dm.files, f)
		dm.n.Store(int32(len(dm.files)))
	}
	dm.mu.Unlock()
	if !known {
		dm.logger.Error("pebble: damaged sstable: reads of its key range fail and writes to it are refused until the store is repaired (tsd repair)",
			"file", f.Path, "keys", f.Keys, "err", shortError(f.Err))
	}
}

// backgroundLogEvery spaces the warnings about background jobs stopping at
// one damaged file: pebble retries its compactions.
const backgroundLogEvery = time.Minute

// backgroundError logs a background job that stopped at a damaged sstable
// already reported, at warning level and at most once a minute a file,
// and reports whether it was one; other errors are left to pebble's
// handler.
func (dm *damage) backgroundError(err error) bool {
	info := pebble.ExtractDataCorruptionInfo(err)
	if info == nil {
		return false
	}
	dm.mu.Lock()
	i := slices.IndexFunc(dm.files, func(g DamagedFile) bool { return g.Path == info.Path })
	quiet := i >= 0 && time.Since(dm.files[i].logged) < backgroundLogEvery
	if i >= 0 && !quiet {
		dm.files[i].logged = time.Now()
	}
	dm.mu.Unlock()
	if i < 0 {
		return false
	}
	if !quiet {
		dm.logger.Warn("pebble: background job stopped at a damaged sstable", "file", info.Path, "err", shortError(err))
	}
	return true
}

// Files returns the damaged sstables found so far.
func (dm *damage) list() []DamagedFile {
	dm.mu.Lock()
	defer dm.mu.Unlock()
	return slices.Clone(dm.files)
}

// checkKeys returns a *DamageError when [lo, hi] (hi exclusive when
// hiExcl) meets a damaged file's range.
func (dm *damage) checkKeys(lo, hi []byte, hiExcl bool) error {
	if dm.n.Load() == 0 {
		return nil
	}
	dm.mu.Lock()
	defer dm.mu.Unlock()
	for i := range dm.files {
		if f := &dm.files[i]; f.overlaps(lo, hi, hiExcl) {
			return &DamageError{File: f.Path, Keys: f.Keys, Write: true}
		}
	}
	return nil
}

// checkBatch refuses a batch that writes into a damaged file's range.
func (dm *damage) checkBatch(b *pebble.Batch) error {
	if dm.n.Load() == 0 {
		return nil
	}
	r := b.Reader()
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil || !ok {
			return err
		}
		hi, excl := key, false
		if kind == pebble.InternalKeyKindRangeDelete {
			hi, excl = value, true
		}
		if err := dm.checkKeys(key, hi, excl); err != nil {
			return err
		}
	}
}

// readError gives a read's error the damaged file and its key range when
// pebble found a damaged sstable.
func (dm *damage) readError(err error) error {
	if err == nil || errors.Is(err, storage.ErrNotFound) || !pebble.IsCorruptionError(err) {
		return err
	}
	var de *DamageError
	if errors.As(err, &de) {
		return err
	}
	if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
		lo, hi := info.Bounds.Start, info.Bounds.End.Key
		return &DamageError{File: info.Path, Keys: dm.describeRange(lo, hi), Err: err, lo: bytes.Clone(lo), hi: bytes.Clone(hi)}
	}
	return fmt.Errorf("%w: %w", storage.ErrCorruption, err)
}

// publishNames records the catalog's table names for messages; the caller
// holds the catalog lock.
func (d *DB) publishNames() {
	m := make(map[uint32]string, len(d.cat.tables))
	for name, t := range d.cat.tables {
		m[t.id] = name
	}
	d.damage.names.Store(&m)
}

// describeRange names the tables and rows of a key range.
func (dm *damage) describeRange(lo, hi []byte) string {
	return "from " + dm.describeKey(lo) + " to " + dm.describeKey(hi)
}

// describeKey names the table and row of a pebble key.
func (dm *damage) describeKey(k []byte) string {
	switch {
	case len(k) == 0:
		return "the start"
	case k[0] == tagCatalog:
		return fmt.Sprintf("catalog entry %q", k[1:])
	case k[0] == tagMeta:
		return fmt.Sprintf("engine record %q", k[1:])
	}
	id, n, err := parseID(k)
	if err != nil {
		return fmt.Sprintf("key %x", k)
	}
	name := fmt.Sprintf("#%d", id)
	if m := dm.names.Load(); m != nil && (*m)[id] != "" {
		name = (*m)[id]
	}
	row, _, _, err := parseField(nil, k[n:])
	if err != nil {
		return fmt.Sprintf("table %s", name)
	}
	return fmt.Sprintf("table %s row %x", name, row)
}

// readError gives a read of t the damaged file and the rows of t it may
// hide (a *storage.DamagedRangeError around the *DamageError), so a
// reader that can do without them reads on past the file's range.
func (t *table) readError(err error) error {
	if err == nil {
		return nil
	}
	if err = t.db.damage.readError(err); !errors.Is(err, storage.ErrCorruption) {
		return err
	}
	return t.damagedRange(err)
}

// damagedRange wraps a read's damage error in the rows of t it may hide.
func (t *table) damagedRange(err error) error {
	var de *DamageError
	var dr *storage.DamagedRangeError
	if !errors.As(err, &de) || de.Write || errors.As(err, &dr) {
		return err
	}
	dr = &storage.DamagedRangeError{Table: t.name, Err: err}
	if keyTableID(de.lo) == t.id {
		if row, edge := keyRow(de.lo); !edge {
			dr.From = row
		}
	}
	if keyTableID(de.hi) == t.id {
		if row, edge := keyRow(de.hi); !edge {
			dr.To = append(row, 0) // the next row
		}
	}
	return dr
}

// unreadableTable reports whether an sstable in the store's directory
// cannot be opened or has an unreadable range deletion block, logging the
// first one found: reading its statistics would fail.
func (d *DB) unreadableTable(po *pebble.Options) bool {
	names, err := d.opts.FS.List(d.dir)
	if err != nil {
		return false
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		path := d.opts.FS.PathJoin(d.dir, name)
		if err := openTable(context.Background(), d.opts.FS, path, po, false); err != nil {
			d.opts.Logger.Error("pebble: sstable unreadable: table statistics are off until the store is repaired (tsd repair)",
				"file", path, "err", shortError(err))
			return true
		}
	}
	return false
}
