package storagetest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// memDB serves models through the storage.DB interface, one lock around
// everything. It exists so the suite can test itself (storagetest's own
// test runs Run against it) before and apart from any engine; it is
// unexported because nothing outside this package may use it as a store.
type memDB struct {
	now func() time.Time
	mu  struct {
		sync.Mutex
		closed bool
		tables map[string]*model
	}
}

func newMemDB(now func() time.Time) *memDB {
	db := &memDB{now: now}
	db.mu.tables = make(map[string]*model)
	return db
}

// enter checks the context and the closed state, returning with the lock
// held on success.
func (db *memDB) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db.mu.Lock()
	if db.mu.closed {
		db.mu.Unlock()
		return storage.ErrClosed
	}
	return nil
}

func (db *memDB) EnsureTable(ctx context.Context, spec storage.TableSpec) error {
	if err := storage.ValidateTableSpec(spec); err != nil {
		return err
	}
	if err := db.enter(ctx); err != nil {
		return err
	}
	defer db.mu.Unlock()
	m := db.mu.tables[spec.Name]
	if m == nil {
		db.mu.tables[spec.Name] = newModel(spec, db.now)
		return nil
	}
	for _, f := range spec.Families {
		i := slices.IndexFunc(m.spec.Families, func(x storage.FamilySpec) bool { return x.Name == f.Name })
		if i < 0 {
			m.spec.Families = append(m.spec.Families, f)
		} else {
			m.spec.Families[i] = f
		}
	}
	return nil
}

func (db *memDB) Table(ctx context.Context, name string) (storage.Table, error) {
	if err := db.enter(ctx); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	if db.mu.tables[name] == nil {
		return nil, fmt.Errorf("table %q: %w", name, storage.ErrNotFound)
	}
	return &memTable{db: db, name: name}, nil
}

func (db *memDB) Tables(ctx context.Context) ([]storage.TableSpec, error) {
	if err := db.enter(ctx); err != nil {
		return nil, err
	}
	defer db.mu.Unlock()
	var out []storage.TableSpec
	for _, name := range sortedKeys(db.mu.tables) {
		s := cloneSpec(db.mu.tables[name].spec)
		sort.Slice(s.Families, func(i, j int) bool { return s.Families[i].Name < s.Families[j].Name })
		out = append(out, s)
	}
	return out, nil
}

func (db *memDB) DropTable(ctx context.Context, name string) error {
	if err := db.enter(ctx); err != nil {
		return err
	}
	defer db.mu.Unlock()
	if db.mu.tables[name] == nil {
		return fmt.Errorf("drop table %q: %w", name, storage.ErrNotFound)
	}
	delete(db.mu.tables, name)
	return nil
}

func (db *memDB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.mu.closed {
		return storage.ErrClosed
	}
	db.mu.closed = true
	return nil
}

// memTable is a handle naming a table of a memDB.
type memTable struct {
	db   *memDB
	name string
}

// with runs fn on the table's model under the store's lock.
func (t *memTable) with(ctx context.Context, fn func(m *model) error) error {
	if err := t.db.enter(ctx); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	m := t.db.mu.tables[t.name]
	if m == nil {
		return fmt.Errorf("table %q: %w", t.name, storage.ErrNotFound)
	}
	return fn(m)
}

func (t *memTable) Spec() storage.TableSpec {
	var s storage.TableSpec
	_ = t.with(context.Background(), func(m *model) error { s = cloneSpec(m.spec); return nil })
	return s
}

func (t *memTable) Get(ctx context.Context, row []byte, opts *storage.ReadOptions) (cells []storage.Cell, err error) {
	err = t.with(ctx, func(m *model) error { cells, err = m.get(row, opts); return err })
	return cells, err
}

func (t *memTable) GetAppend(ctx context.Context, dst []storage.Cell, buf []byte, row []byte, opts *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	cells, err := t.Get(ctx, row, opts)
	if err != nil {
		return dst, buf, err
	}
	dst, buf = appendOwned(dst, buf, cells)
	return dst, buf, nil
}

// appendOwned appends cells to dst with their bytes copied into buf, which
// grows once before any cell points into it; the cells share one row key.
func appendOwned(dst []storage.Cell, buf []byte, cells []storage.Cell) ([]storage.Cell, []byte) {
	size := len(cells[0].Row)
	for _, c := range cells {
		size += len(c.Qualifier) + len(c.Value)
	}
	buf = slices.Grow(buf, size)
	var row []byte
	row, buf = appendCapped(buf, cells[0].Row)
	for _, c := range cells {
		c.Row = row
		c.Qualifier, buf = appendCapped(buf, c.Qualifier)
		c.Value, buf = appendCapped(buf, c.Value)
		dst = append(dst, c)
	}
	return dst, buf
}

// appendCapped appends b to buf, which has room for it, and returns the
// copy capped at its length with the grown buf.
func appendCapped(buf, b []byte) ([]byte, []byte) {
	k := len(buf)
	buf = append(buf, b...)
	return buf[k:len(buf):len(buf)], buf
}

func (t *memTable) Scan(ctx context.Context, opts *storage.ScanOptions) storage.Scanner {
	s := &rowsScanner{ctx: ctx}
	s.err = t.with(ctx, func(m *model) (err error) { s.rows, err = m.scan(opts); return err })
	return s
}

func (t *memTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	return t.with(ctx, func(m *model) error { return m.put(row, cells) })
}

func (t *memTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	return t.with(ctx, func(m *model) error { return m.apply(muts) })
}

func (t *memTable) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	return t.with(ctx, func(m *model) error { return m.delete(row, dels) })
}

func (t *memTable) DeleteRange(ctx context.Context, start, stop []byte) error {
	return t.with(ctx, func(m *model) error { m.deleteRange(start, stop); return nil })
}

func (t *memTable) Increment(ctx context.Context, row []byte, family string, qualifier []byte, delta int64) (n int64, err error) {
	err = t.with(ctx, func(m *model) error { n, err = m.increment(row, family, qualifier, delta); return err })
	return n, err
}

func (t *memTable) CheckAndPut(ctx context.Context, row []byte, family string, qualifier, expected []byte, cells []storage.Cell) error {
	return t.with(ctx, func(m *model) error { return m.checkAndPut(row, family, qualifier, expected, cells) })
}

func (t *memTable) Append(ctx context.Context, row []byte, family string, qualifier, value []byte) (v []byte, err error) {
	err = t.with(ctx, func(m *model) error { v, err = m.append(row, family, qualifier, value); return err })
	return v, err
}

// rowsScanner streams precomputed rows, checking its context on every
// step as an engine's scanner must.
type rowsScanner struct {
	ctx    context.Context
	rows   []storage.Row
	cur    storage.Row
	err    error
	closed bool
}

func (s *rowsScanner) Next() bool {
	if s.err != nil || s.closed {
		return false
	}
	if err := s.ctx.Err(); err != nil {
		s.err = fmt.Errorf("scan: %w", err)
		return false
	}
	if len(s.rows) == 0 {
		return false
	}
	s.cur, s.rows = s.rows[0], s.rows[1:]
	return true
}

func (s *rowsScanner) Row() storage.Row { return s.cur }
func (s *rowsScanner) Err() error       { return s.err }

func (s *rowsScanner) Close() error {
	s.closed = true
	s.rows, s.cur = nil, storage.Row{}
	return s.err
}
