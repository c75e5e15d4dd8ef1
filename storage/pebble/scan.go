package pebble

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
	"rsc.io/binaryregexp"
)

// scanner walks one pebble iterator over a table's keys and yields the cells
// that pass its filters. Its decode buffers are reused from cell to cell and,
// through scannerPool, from scan to scan, so the steady state allocates
// nothing per cell.
type scanner struct {
	// mu is held by every method, so DB.Close can abort a scanner that
	// another goroutine is using without racing on the iterator.
	mu  sync.Mutex
	t   *table
	st  *tableState
	ctx context.Context
	it  *pebble.Iterator
	io  pebble.IterOptions
	err error

	done, started, pending, skipRow bool
	reverse, prefixMode, registered bool

	limit, rows int
	re          *binaryregexp.Regexp
	f           filter
	steps       int

	lo, hi     []byte
	rowPrefix  []byte // pebble prefix of the current row
	row        []byte // decoded row; aliases rowPrefix or rowBuf
	rowBuf     []byte
	rowCounted bool

	col               []byte // current column key without timestamp
	colOK             bool
	famIdx            int
	qual, qualBuf     []byte
	versions, emitted int

	cell storage.Cell
}

var scannerPool = sync.Pool{New: func() any { return &scanner{famIdx: -1} }}

// release returns s to the pool, keeping its buffers' capacity.
func (s *scanner) release() {
	*s = scanner{
		f:      filter{famMask: s.f.famMask[:0]},
		lo:     s.lo[:0], hi: s.hi[:0],
		rowPrefix: s.rowPrefix[:0], rowBuf: s.rowBuf[:0],
		col: s.col[:0], qualBuf: s.qualBuf[:0], famIdx: -1,
	}
	scannerPool.Put(s)
}

// open creates the pebble iterator over [s.lo, s.hi).
func (s *scanner) open() error {
	s.io = pebble.IterOptions{LowerBound: s.lo, UpperBound: s.hi}
	it, err := s.t.db.pdb.NewIterWithContext(s.ctx, &s.io)
	if err != nil {
		return err
	}
	s.it = it
	return nil
}

// next advances to the next visible cell.
func (s *scanner) next() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.done {
		if !s.pending && !s.advance() {
			s.finish()
			break
		}
		s.pending = false
		if s.examine() {
			return true
		}
	}
	return false
}

// advance moves the iterator to the next key to examine.
func (s *scanner) advance() bool {
	if s.steps++; s.steps&255 == 0 {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return false
		}
	}
	switch {
	case !s.started:
		s.started = true
		return s.first()
	case s.reverse:
		if s.it.Next() && bytes.HasPrefix(s.it.Key(), s.rowPrefix) {
			return true
		}
		return s.prevRow(false)
	case s.skipRow:
		s.skipRow = false
		return s.it.NextPrefix()
	default:
		return s.it.Next()
	}
}

func (s *scanner) first() bool {
	switch {
	case s.reverse:
		return s.prevRow(true)
	case s.prefixMode:
		// A prefix seek consults the row bloom filters.
		return s.it.SeekPrefixGE(s.lo)
	default:
		return s.it.First()
	}
}

// prevRow positions the iterator on the first key of the row before the
// current one (or of the last row), skipping rows the regex rejects.
// Reverse scans thus return rows descending and cells in storage order
// without buffering a row.
func (s *scanner) prevRow(last bool) bool {
	for {
		var ok bool
		if last {
			ok, last = s.it.Last(), false
		} else {
			ok = s.it.SeekLT(s.rowPrefix)
		}
		if !ok {
			return false
		}
		if s.enterRow(s.it.Key()) {
			return s.it.SeekGE(s.rowPrefix)
		}
		if s.done {
			return false
		}
	}
}

// examine handles the key under the iterator and reports whether it is a
// cell to return.
func (s *scanner) examine() bool {
	key := s.it.Key()
	if len(s.rowPrefix) == 0 || !bytes.HasPrefix(key, s.rowPrefix) {
		if !s.enterRow(key) {
			s.skipRow = !s.done
			return false
		}
	}
	return s.emit(key)
}

// enterRow starts a new row at key; it reports false when the row limit is
// reached, the key is damaged or the regex rejects the row.
func (s *scanner) enterRow(key []byte) bool {
	if s.limit > 0 && s.rows >= s.limit {
		s.done = true
		return false
	}
	n := split(key)
	s.rowPrefix = append(s.rowPrefix[:0], key[:n]...)
	s.col, s.rowCounted = s.col[:0], false
	var err error
	s.row, s.rowBuf, _, err = parseEscaped(s.rowBuf[:0], s.rowPrefix[min(headerLen, n):])
	if err != nil {
		s.corrupt(fmt.Errorf("row of key %x: %w", key, err))
		return false
	}
	return s.re == nil || s.re.Match(s.row)
}

// emit decides whether the version under the iterator is visible and, if
// so, makes it the current cell.
func (s *scanner) emit(key []byte) bool {
	colLen := len(key) - tsLen
	if colLen <= len(s.rowPrefix) {
		s.corrupt(fmt.Errorf("key %x too short", key))
		return false
	}
	if !bytes.Equal(key[:colLen], s.col) && !s.enterColumn(key[:colLen]) {
		return false
	}
	v := s.versions
	s.versions++
	if !s.colOK {
		return false
	}
	ts := keyTimestamp(key)
	if !s.f.version(&s.st.fams[s.famIdx], v, s.emitted, ts) {
		return false
	}
	val, err := s.it.ValueAndErr()
	if err != nil {
		s.err = err
		s.done = true
		return false
	}
	s.emitted++
	if !s.rowCounted {
		s.rowCounted = true
		s.rows++
	}
	s.cell = storage.Cell{Row: s.row, Family: s.st.fams[s.famIdx].name, Qualifier: s.qual, Timestamp: ts, Value: val}
	return true
}

// enterColumn decodes a new column's family and qualifier.
func (s *scanner) enterColumn(col []byte) bool {
	s.col = append(s.col[:0], col...)
	s.versions, s.emitted = 0, 0
	rest := s.col[len(s.rowPrefix):]
	i := bytes.IndexByte(rest, famTerm)
	if i < 0 {
		s.corrupt(fmt.Errorf("family: %w", errBadKey))
		return false
	}
	if s.famIdx < 0 || s.st.fams[s.famIdx].name != string(rest[:i]) {
		if s.famIdx = s.st.family(rest[:i]); s.famIdx < 0 {
			s.corrupt(fmt.Errorf("unknown family %q", rest[:i]))
			return false
		}
	}
	var err error
	s.qual, s.qualBuf, rest, err = parseEscaped(s.qualBuf[:0], rest[i+1:])
	if err != nil || len(rest) != 0 {
		s.corrupt(fmt.Errorf("qualifier: %w", errBadKey))
		return false
	}
	s.colOK = s.f.column(s.famIdx, s.qual)
	return true
}

// corrupt ends the scan with a CorruptionError naming the current row.
func (s *scanner) corrupt(err error) {
	s.err = &storage.CorruptionError{Table: s.t.name, Row: bytes.Clone(s.row), Qualifier: bytes.Clone(s.qual), Err: err}
	s.done = true
}

// finish ends the scan, keeping the iterator's error if there is one.
func (s *scanner) finish() {
	s.done = true
	if s.err == nil && s.it != nil {
		s.err = s.it.Error()
	}
}

// close releases the iterator and returns the sticky error.
func (s *scanner) close() error {
	s.mu.Lock()
	s.closeIter()
	s.done = true
	err := s.err
	s.mu.Unlock()
	return err
}

func (s *scanner) closeIter() {
	if s.it == nil {
		return
	}
	if err := s.it.Close(); err != nil && s.err == nil {
		s.err = err
	}
	s.it = nil
}

// abort ends a scanner on behalf of DB.Close.
func (s *scanner) abort(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeIter()
	if s.err == nil {
		s.err = err
	}
	s.done = true
}

// scanHandle is the storage.Scanner given to callers. It drops its pooled
// scanner on Close, so a second Close or a late Next cannot touch a scanner
// that now serves someone else.
type scanHandle struct {
	s   *scanner
	err error
}

// Next advances to the next cell and reports whether there is one.
func (h *scanHandle) Next() bool { return h.s != nil && h.s.next() }

// Cell returns the current cell; its slices are valid until the next call to
// Next or Close.
func (h *scanHandle) Cell() storage.Cell {
	if h.s == nil {
		return storage.Cell{}
	}
	return h.s.cell
}

// Err returns the error that ended the scan, if any.
func (h *scanHandle) Err() error {
	if h.s == nil {
		return h.err
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.err
}

// Close releases the scanner and returns Err.
func (h *scanHandle) Close() error {
	s := h.s
	if s == nil {
		return h.err
	}
	h.s = nil
	h.err = s.close()
	if s.registered {
		s.t.db.unregister(s)
	}
	s.release()
	return h.err
}

func (d *DB) register(s *scanner) {
	d.scanners.Lock()
	d.scanners.set[s] = struct{}{}
	s.registered = true
	d.scanners.Unlock()
}

func (d *DB) unregister(s *scanner) {
	d.scanners.Lock()
	delete(d.scanners.set, s)
	d.scanners.Unlock()
}

// Scan streams the cells of rows in [opts.Start, opts.Stop) that pass the
// filters. Invalid options yield a scanner whose Err says why.
func (t *table) Scan(ctx context.Context, opts *storage.ScanOptions) storage.Scanner {
	if opts == nil {
		opts = &storage.ScanOptions{}
	}
	if err := ctx.Err(); err != nil {
		return &scanHandle{err: err}
	}
	st, err := t.begin()
	if err != nil {
		return &scanHandle{err: err}
	}
	defer t.db.leave()
	s, err := t.newScanner(ctx, st, opts)
	if err != nil {
		return &scanHandle{err: fmt.Errorf("scan table %q: %w", t.name, err)}
	}
	if s.it != nil {
		t.db.register(s)
	}
	return &scanHandle{s: s}
}

// newScanner validates opts and opens a scanner over the rows they select.
func (t *table) newScanner(ctx context.Context, st *tableState, opts *storage.ScanOptions) (*scanner, error) {
	if err := storage.ValidateRead(st.spec, &opts.ReadOptions); err != nil {
		return nil, err
	}
	if opts.Limit < 0 {
		return nil, storage.Invalidf("negative row limit %d", opts.Limit)
	}
	var re *binaryregexp.Regexp
	if opts.RowRegex != "" {
		var err error
		if re, err = compileRowRegex(opts.RowRegex); err != nil {
			return nil, err
		}
	}
	s := scannerPool.Get().(*scanner)
	s.t, s.st, s.ctx, s.re = t, st, ctx, re
	s.reverse, s.limit = opts.Reverse, opts.Limit
	s.f.reset(st, &opts.ReadOptions, t.db.nowMicros())
	s.lo, s.hi = t.rowBounds(s.lo, s.hi, opts.Start, opts.Stop)
	if bytes.Compare(s.lo, s.hi) >= 0 {
		s.done = true
		return s, nil
	}
	if err := s.open(); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}
