package pebble

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

const catalogVersion = 1

// appendCatalogKey appends the key of a table's catalog entry.
func appendCatalogKey(dst []byte, name string) []byte {
	return append(append(dst, tagCatalog), name...)
}

// appendSpec encodes a table's id and families (see doc.go).
func appendSpec(dst []byte, id uint32, spec storage.TableSpec) []byte {
	dst = append(dst, catalogVersion)
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = binary.AppendUvarint(dst, uint64(len(spec.Families)))
	for _, f := range spec.Families {
		dst = binary.AppendUvarint(dst, uint64(len(f.Name)))
		dst = append(dst, f.Name...)
		dst = binary.AppendUvarint(dst, uint64(f.MaxVersions))
		dst = binary.AppendUvarint(dst, uint64(f.TTL))
	}
	return dst
}

// parseSpec decodes a catalog entry written by appendSpec.
func parseSpec(name string, src []byte) (uint32, storage.TableSpec, error) {
	spec := storage.TableSpec{Name: name}
	if len(src) < 5 || src[0] != catalogVersion {
		return 0, spec, fmt.Errorf("catalog entry of table %q: bad header", name)
	}
	id := binary.BigEndian.Uint32(src[1:5])
	r := uvarintReader{src: src[5:]}
	n := r.next()
	for i := uint64(0); i < n && r.err == nil; i++ {
		l := r.next()
		fname := r.bytes(l)
		f := storage.FamilySpec{Name: string(fname), MaxVersions: int(r.next()), TTL: time.Duration(r.next())}
		spec.Families = append(spec.Families, f)
	}
	if r.err != nil || len(r.src) != 0 {
		return 0, spec, fmt.Errorf("catalog entry of table %q: truncated or trailing bytes", name)
	}
	if err := storage.ValidateTableSpec(spec); err != nil {
		return 0, spec, fmt.Errorf("catalog entry of table %q: %w", name, err)
	}
	return id, spec, nil
}

// uvarintReader reads uvarints with a sticky error.
type uvarintReader struct {
	src []byte
	err error
}

func (r *uvarintReader) next() uint64 {
	v, n := binary.Uvarint(r.src)
	if n <= 0 {
		r.err = errBadKey
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *uvarintReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.src)) {
		r.err = errBadKey
		return nil
	}
	b := r.src[:n]
	r.src = r.src[n:]
	return b
}

var metaNextKey = append([]byte{tagMeta}, metaNext...)

// loadCatalog reads every table spec and the id counter at Open, and
// keeps the catalog's copy up to date. When damage keeps them from being
// read it takes them from the copy.
func (d *DB) loadCatalog() error {
	err := d.readCatalog()
	switch {
	case err == nil:
		d.saveCatalogFile()
	case !errors.Is(err, storage.ErrCorruption):
		return err
	default:
		if ferr := d.loadCatalogFile(); ferr != nil {
			return fmt.Errorf("%w (its copy %s: %v)", err, catalogFileName, ferr)
		}
		d.opts.Logger.Error("pebble: the table catalog is damaged in the store; using its copy",
			"file", d.opts.FS.PathJoin(d.dir, catalogFileName), "err", err)
	}
	d.publishNames()
	return nil
}

// readCatalog reads the catalog and the id counter from the store.
func (d *DB) readCatalog() error {
	d.cat.tables = make(map[string]*table)
	d.cat.nextID = 1
	it, err := d.pdb.NewIter(&pebble.IterOptions{
		LowerBound: []byte{tagCatalog}, UpperBound: []byte{tagCatalog + 1},
	})
	if err != nil {
		return fmt.Errorf("open pebble store %s: read catalog: %w", d.dir, d.damage.readError(err))
	}
	for it.First(); it.Valid(); it.Next() {
		name := string(it.Key()[1:])
		id, spec, err := parseSpec(name, it.Value())
		if err != nil {
			it.Close()
			return &storage.CorruptionError{Table: name, Err: err}
		}
		d.cat.tables[name] = newTable(d, id, spec)
		d.cat.nextID = max(d.cat.nextID, id+1)
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("open pebble store %s: read catalog: %w", d.dir, d.damage.readError(err))
	}
	return d.loadNextID()
}

// loadNextID reads the persisted id counter, which stays ahead of dropped
// tables' ids so a new table never inherits an old one's key range.
func (d *DB) loadNextID() error {
	v, closer, err := d.pdb.Get(metaNextKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open pebble store %s: read table id counter: %w", d.dir, d.damage.readError(err))
	}
	defer closer.Close()
	if len(v) != 4 {
		return &storage.CorruptionError{Err: fmt.Errorf("table id counter of %d bytes", len(v))}
	}
	d.cat.nextID = max(d.cat.nextID, binary.BigEndian.Uint32(v))
	return nil
}

// EnsureTable creates the table if it is missing, adds missing families and
// updates the MaxVersions and TTL of existing ones. Families it does not
// list are kept.
func (d *DB) EnsureTable(ctx context.Context, spec storage.TableSpec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storage.ValidateTableSpec(spec); err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	d.cat.Lock()
	defer d.cat.Unlock()
	if t := d.cat.tables[spec.Name]; t != nil {
		return d.updateTable(t, spec)
	}
	return d.createTable(spec)
}

// createTable allocates an id and persists the new table. cat is held.
func (d *DB) createTable(spec storage.TableSpec) error {
	id := d.cat.nextID
	if id == 1<<32-1 {
		return fmt.Errorf("create table %q: table ids exhausted", spec.Name)
	}
	spec = cloneSpec(spec)
	b := d.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(appendCatalogKey(nil, spec.Name), appendSpec(nil, id, spec), nil)
	_ = b.Set(metaNextKey, binary.BigEndian.AppendUint32(nil, id+1), nil)
	if err := d.commit(b, d.wo); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	d.cat.nextID = id + 1
	d.cat.tables[spec.Name] = newTable(d, id, spec)
	d.publishNames()
	d.saveCatalogFile()
	return nil
}

// updateTable merges spec into an existing table. cat is held.
func (d *DB) updateTable(t *table, spec storage.TableSpec) error {
	cur := t.state.Load().spec
	merged := cloneSpec(cur)
	for _, f := range spec.Families {
		i := slices.IndexFunc(merged.Families, func(g storage.FamilySpec) bool { return g.Name == f.Name })
		if i < 0 {
			merged.Families = append(merged.Families, f)
		} else {
			merged.Families[i] = f
		}
	}
	merged = cloneSpec(merged)
	if slices.Equal(merged.Families, cur.Families) {
		return nil // nothing changed: spare the synced catalog write
	}
	b := d.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(appendCatalogKey(nil, spec.Name), appendSpec(nil, t.id, merged), nil)
	if err := d.commit(b, d.wo); err != nil {
		return fmt.Errorf("update table %q: %w", spec.Name, err)
	}
	t.state.Store(newTableState(merged))
	d.saveCatalogFile()
	return nil
}

// cloneSpec copies a spec with its families in name order, the order
// Tables and Spec report.
func cloneSpec(s storage.TableSpec) storage.TableSpec {
	s.Families = slices.Clone(s.Families)
	slices.SortFunc(s.Families, func(a, b storage.FamilySpec) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// Table returns a handle on an existing table. Handles stay valid across
// EnsureTable updates; after DropTable they return storage.ErrNotFound.
func (d *DB) Table(ctx context.Context, name string) (storage.Table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	d.cat.Lock()
	defer d.cat.Unlock()
	t := d.cat.tables[name]
	if t == nil {
		return nil, fmt.Errorf("table %q: %w", name, storage.ErrNotFound)
	}
	return t, nil
}

// Tables lists the tables and their families in name order.
func (d *DB) Tables(ctx context.Context) ([]storage.TableSpec, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	d.cat.Lock()
	defer d.cat.Unlock()
	specs := make([]storage.TableSpec, 0, len(d.cat.tables))
	for _, t := range d.cat.tables {
		specs = append(specs, t.Spec())
	}
	slices.SortFunc(specs, func(a, b storage.TableSpec) int { return strings.Compare(a.Name, b.Name) })
	return specs, nil
}

// DropTable deletes a table and all its data with one range deletion; the
// space returns as compactions run (or at once with Compact). It waits for
// calls in flight so none writes into the dropped range afterwards.
func (d *DB) DropTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.opMu.Lock()
	defer d.opMu.Unlock()
	if d.closed.Load() {
		return storage.ErrClosed
	}
	d.cat.Lock()
	defer d.cat.Unlock()
	t := d.cat.tables[name]
	if t == nil {
		return fmt.Errorf("drop table %q: %w", name, storage.ErrNotFound)
	}
	b := d.pdb.NewBatch()
	defer b.Close()
	_ = b.Delete(appendCatalogKey(nil, name), nil)
	_ = b.DeleteRange(appendTablePrefix(nil, t.id), appendTablePrefix(nil, t.id+1), nil)
	if err := d.commit(b, d.wo); err != nil {
		return fmt.Errorf("drop table %q: %w", name, err)
	}
	t.dropped.Store(true)
	delete(d.cat.tables, name)
	d.publishNames()
	d.saveCatalogFile()
	return nil
}
