package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
	"rsc.io/binaryregexp"
)

// scanner walks one pebble iterator over a table's keys and yields the cells
// that pass its filters, gathered into rows (batches of at most maxBatch
// bytes). Its decode and row buffers are reused from row to row and,
// through scannerPool, from scan to scan, so the steady state allocates
// nothing per cell.
type scanner struct {
	t   *table
	st  *tableState
	ctx context.Context
	it  *pebble.Iterator
	io  pebble.IterOptions
	err error
	// gen and reusable say whether it may return to the DB's iterator
	// pool (see pooledIter).
	gen      uint64
	reusable bool

	done, started, skipRow bool
	reverse                bool
	// carry says the current cell is visible and in no batch yet: it
	// opens the next one. The iterator has not moved past it, so its
	// value is still valid.
	carry bool
	// eng is the pebble opening the scanner holds a reference on (Scan's
	// scanners, not Get's), nil when it holds none.
	eng *engine

	limit, rows int
	rowSeq      uint64 // counts the rows entered, so a batch sees its row end
	maxBatch    int    // the scan's MaxBatchBytes
	re          *binaryregexp.Regexp
	f           filter
	steps       int

	lo, hi     []byte
	rowPrefix  []byte // pebble prefix of the current row
	row        []byte // decoded row, in rowBuf
	rowBuf     []byte
	rowCounted bool
	// lastRow says the bounds end with the current row, so every key left
	// is in it and next skips the row check (one-row Scans and Gets).
	lastRow bool

	col               []byte // current column (family and qualifier code) when longer than 8 bytes
	colWord           uint64 // current column as a word (columnWord), 0 when longer
	colLen            int    // current column's length, 0 before a row's first key
	colOK             bool
	countVersions     bool // a version limit applies, so columns are tracked
	famIdx            int
	famName           string // fams[famIdx].name, kept at hand
	famMax            int    // fams[famIdx].maxVersions, kept at hand
	famWord           uint64 // famName and its terminator as a word, when famWordLen > 0
	famWordLen        int    // len(famName)+1 when at most 8, else 0
	qualWord          [8]byte
	qual, qualBuf     []byte
	versions, emitted int

	val []byte // current cell's value
	ts  int64  // current cell's timestamp

	// The row being gathered: its key, then each cell's qualifier and
	// value, in data; where each cell ends in meta. A Scan's batch points
	// into them (batch, cells); a Get copies them out for its caller.
	data  []byte
	meta  []cellMeta
	cells []storage.Cell
	batch storage.Row
}

var scannerPool = sync.Pool{New: func() any { return &scanner{famIdx: -1} }}

// Row buffers above these sizes are dropped rather than pooled, so one
// scan of a huge row does not pin its memory in the pool.
const (
	maxPooledData  = 1 << 20
	maxPooledCells = 1 << 14
)

// release returns s to the pool, keeping its buffers' capacity (within
// maxPooledData and maxPooledCells).
func (s *scanner) release() {
	data, meta, cells := s.data[:0], s.meta[:0], s.cells[:0]
	if cap(data) > maxPooledData {
		data = nil
	}
	if cap(meta) > maxPooledCells {
		meta = nil
	}
	if cap(cells) > maxPooledCells {
		cells = nil
	}
	*s = scanner{
		f:  filter{famMask: s.f.famMask[:0]},
		lo: s.lo[:0], hi: s.hi[:0],
		rowPrefix: s.rowPrefix[:0], rowBuf: s.rowBuf[:0],
		col: s.col[:0], qualBuf: s.qualBuf[:0], famIdx: -1,
		data: data, meta: meta, cells: cells,
	}
	scannerPool.Put(s)
}

// open takes a pebble iterator over [s.lo, s.hi), a pooled one when it
// still sees the newest state.
func (s *scanner) open() error {
	p, err := s.t.db.acquire(s.ctx, s.lo, s.hi, &s.io)
	if err != nil {
		return s.t.readError(err)
	}
	s.it, s.gen, s.reusable = p.it, p.gen, p.reusable
	return nil
}

// next advances to the next visible cell. It is the per-cell hot path, so
// the row check is inlined here rather than in a helper.
func (s *scanner) next() bool {
	if s.eng != nil && s.eng.retired.Load() {
		s.err = s.retiredErr()
		s.finish()
		return false
	}
	for !s.done {
		switch {
		case s.plainStep():
			// The common step, inlined: forward to the next key.
			if !s.it.Next() {
				s.finish()
				return false
			}
		case !s.advance():
			s.finish()
			return false
		}
		key := s.it.Key()
		if !s.lastRow && (len(s.rowPrefix) == 0 || !bytes.HasPrefix(key, s.rowPrefix)) {
			if !s.enterRow(key) {
				s.skipRow = !s.done
				continue
			}
		}
		// emit by hand: the compiler does not inline it, and the call
		// costs a few percent of a plain scan.
		visible := false
		if s.f.plain {
			visible = s.emitPlain(key)
		} else {
			visible = s.emitAny(key)
		}
		if visible {
			return s.loadValue()
		}
	}
	return false
}

// loadValue fetches the value of the cell emit accepted.
func (s *scanner) loadValue() bool {
	val, err := s.it.ValueAndErr()
	if err != nil {
		s.err = err
		s.done = true
		return false
	}
	s.val = val
	return true
}

// nextBatch gathers the next batch: the visible cells of one row, in
// storage order, as long as they fit in maxBatch bytes (at least one). The
// cell that ends a batch, of the next row or past the bound, is carried
// into the next batch: the iterator stays on it until then. A scan that
// fails inside a row drops the cells gathered of it.
func (s *scanner) nextBatch() bool {
	if !s.carry && !s.next() {
		return false
	}
	s.carry, s.batch.Partial = false, false
	// The key is copied: carrying a cell of the next row moves s.row on.
	data, meta := append(s.data[:0], s.row...), s.meta[:0]
	k, seq, size := len(s.row), s.rowSeq, 0
	for {
		n := len(s.qual) + len(s.val) + storage.CellOverhead
		if len(meta) > 0 && size+n > s.maxBatch {
			s.carry, s.batch.Partial = true, true
			break
		}
		size += n
		data, meta = gather(data, meta, s.qual, s.val, s.ts, s.famIdx)
		if !s.next() {
			if s.err != nil {
				s.data, s.meta = data, meta
				return false
			}
			break
		}
		if s.rowSeq != seq {
			s.carry = true
			break
		}
	}
	s.data, s.meta = data, meta
	s.cells = slices.Grow(s.cells[:0], len(meta))[:len(meta)]
	fillCells(s.cells, data, meta, k, s.st.fams)
	s.batch.Key, s.batch.Cells = data[:k:k], s.cells
	return true
}

// plainStep reports whether the next step is a plain forward Next: the scan
// has started, runs forward, skips no row, and is not due a context check.
func (s *scanner) plainStep() bool {
	s.steps++
	return s.started && !s.reverse && !s.skipRow && s.steps&255 != 0
}

// advance moves the iterator to the next key to examine, checking the
// context on every 256th step.
func (s *scanner) advance() bool {
	if s.steps&255 == 0 {
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

// enterRow starts a new row at key; it reports false when the row limit is
// reached, the key is damaged or the regex rejects the row.
func (s *scanner) enterRow(key []byte) bool {
	if s.limit > 0 && s.rows >= s.limit {
		s.done = true
		return false
	}
	n := split(key)
	s.rowPrefix = append(s.rowPrefix[:0], key[:n]...)
	s.rowSeq++
	s.col, s.colLen, s.rowCounted = s.col[:0], 0, false
	var err error
	s.row, s.rowBuf, _, err = parseField(s.rowBuf[:0], s.rowPrefix[max(rowStart(s.rowPrefix), 0):])
	if err != nil {
		s.corrupt(fmt.Errorf("row of key %x: %w", key, err))
		return false
	}
	s.lastRow = !s.reverse && isSuccessor(s.hi, s.rowPrefix)
	return s.re == nil || s.re.Match(s.row)
}

// equalShort is bytes.Equal for the short columns and family names of the
// per-cell path, where a byte loop beats the call to the runtime's memequal.
func equalShort[S string | []byte](a []byte, b S) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isSuccessor reports whether hi is prefixSuccessor of a row prefix p
// (which ends with its field terminator).
func isSuccessor(hi, p []byte) bool {
	n := len(p)
	return n > 0 && len(hi) == n && hi[n-1] == p[n-1]+1 && string(hi[:n-1]) == string(p[:n-1])
}

// emit decides whether the version whose key is under the iterator is
// visible and, if so, makes it the current cell (but for its value).
func (s *scanner) emit(key []byte) bool {
	if s.f.plain {
		return s.emitPlain(key)
	}
	return s.emitAny(key)
}

// emitAny is emit for every read and key.
func (s *scanner) emitAny(key []byte) bool {
	colLen := len(key) - tsLen
	if colLen <= len(s.rowPrefix) {
		s.corrupt(fmt.Errorf("key %x too short", key))
		return false
	}
	col := key[len(s.rowPrefix):colLen]
	w := columnWord(key, len(col))
	switch {
	case s.countVersions && s.sameColumn(col, w):
		// An older version of the current column: decoded already.
	case s.countVersions:
		s.versions, s.emitted = 0, 0
		if !s.decodeColumnWord(col, w) {
			return false
		}
	// Without version limits every key is decoded afresh, which is
	// cheaper than remembering the column to compare the next key to.
	case !s.decodeColumnWord(col, w):
		return false
	}
	v := s.versions
	s.versions++
	if !s.colOK {
		return false
	}
	ts := keyTimestamp8(key)
	if s.f.hasVersion {
		// Families' version limits alone (OpenTSDB's tables keep one
		// version, no TTL) are checked here without the general filter.
		if s.f.limitOnly {
			if s.famMax > 0 && v >= s.famMax {
				return false
			}
		} else if !s.f.version(&s.st.fams[s.famIdx], v, s.emitted, ts) {
			return false
		}
	}
	s.emitted++
	if !s.rowCounted {
		s.rowCounted = true
		s.rows++
	}
	s.ts = ts
	return true
}

// Word-at-a-time column handling: a column (family, 0x00, qualifier code,
// 0x00) of at most 8 bytes, as OpenTSDB's family "t" with a 2- or 4-byte
// qualifier makes, is read from the key as one little-endian word, byte i
// of the column in bits 8i..8i+7 and zeros above it. Comparing columns and
// decoding plain qualifiers then costs a few register operations instead
// of byte loops with bounds checks.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// lowBytes masks the low n bytes of a word, n = 0..8.
func lowBytes(n int) uint64 { return 1<<(8*uint(n)) - 1 }

// columnWord returns the column of n bytes that ends key before its
// timestamp as a word, or 0 when n > 8 (no column is 0: it ends with a
// terminator after a non-empty family). The timestamp's 7 bytes after the
// column keep the 8-byte load inside key.
func columnWord(key []byte, n int) uint64 {
	if n > 8 {
		return 0
	}
	off := len(key) - tsLen - n
	return binary.LittleEndian.Uint64(key[off:off+8]) & lowBytes(n)
}

// sameColumn reports whether col (whose word is w) is the previous key's
// column, and makes it the column to compare the next key to.
func (s *scanner) sameColumn(col []byte, w uint64) bool {
	n := len(col)
	if n == s.colLen && w == s.colWord && (w != 0 || string(col) == string(s.col)) {
		return true
	}
	s.colWord, s.colLen = w, n
	if w == 0 {
		s.col = append(s.col[:0], col...)
	}
	return false
}

// hasZeroByte reports whether any byte of x is 0x00.
func hasZeroByte(x uint64) bool { return (x-ones)&^x&highs != 0 }

// decodeColumnWord is decodeColumn for a column whose word is w: when the
// family is the previous cell's and the qualifier code is plain, the
// qualifier is decoded a word at a time. Anything else goes through
// decodeColumn.
func (s *scanner) decodeColumnWord(col []byte, w uint64) bool {
	f := s.famWordLen
	if w == 0 || f == 0 || len(col) <= f || w&lowBytes(f) != s.famWord {
		return s.decodeColumn(col)
	}
	qn := len(col) - f - 1
	q, ok := plainQualifier(w>>(8*uint(f)), qn)
	if !ok {
		return s.decodeColumn(col)
	}
	s.setQualifier(q, qn)
	s.colOK = !s.f.hasColumn || s.f.column(s.famIdx, s.qual)
	return true
}

// plainQualifier decodes the code q of a qn-byte qualifier, read from a
// column word and followed there by its terminator, and reports false when
// the code is not plain: it holds a two-byte code (0xFF) or a 0x00 before
// its terminator (a malformed key, left to decodeColumn to report). Each
// byte of a plain code is the qualifier byte plus one, so subtracting 0x01
// from every byte at once decodes it.
func plainQualifier(q uint64, qn int) (uint64, bool) {
	m := lowBytes(qn)
	// The terminator and the bytes above it must be 0. Then q|^m has a
	// 0x00 byte only where the code has one (a terminator) and ^q only
	// where it has 0xFF (a two-byte code).
	if q&^m != 0 || hasZeroByte(q|^m) || hasZeroByte(^q) {
		return 0, false
	}
	return q - ones&m, true
}

// setQualifier makes the decoded qualifier word q of n bytes current.
func (s *scanner) setQualifier(q uint64, n int) {
	binary.LittleEndian.PutUint64(s.qualWord[:], q)
	s.qual = s.qualWord[:n:n]
}

// emitPlain is emit for the common case, in fewer steps: the read's only
// filter is the families' version limits (every read of OpenTSDB's
// tables, and every read without options), and the column is at most 8
// bytes, in the current family, with a plain qualifier code. Other keys go
// to emitAny.
func (s *scanner) emitPlain(key []byte) bool {
	p, f := len(s.rowPrefix), s.famWordLen
	n := len(key) - tsLen - p
	if n > 8 || n <= f || f == 0 {
		return s.emitAny(key)
	}
	w := binary.LittleEndian.Uint64(key[p:p+8]) & lowBytes(n)
	if s.countVersions && n == s.colLen && w == s.colWord {
		// An older version of the current column.
		v := s.versions
		s.versions++
		if !s.colOK || s.famMax > 0 && v >= s.famMax {
			return false
		}
	} else {
		qn := n - f - 1
		q, ok := plainQualifier(w>>(8*uint(f)), qn)
		if !ok || w&lowBytes(f) != s.famWord {
			return s.emitAny(key)
		}
		s.setQualifier(q, qn)
		s.colWord, s.colLen, s.colOK = w, n, true
		s.versions, s.emitted = 1, 0
	}
	s.emitted++
	if !s.rowCounted {
		s.rowCounted = true
		s.rows++
	}
	s.ts = keyTimestamp8(key)
	return true
}

// keyTimestamp8 is keyTimestamp for keys of at least 8 bytes, with one load.
func keyTimestamp8(key []byte) int64 {
	v := binary.BigEndian.Uint64(key[len(key)-8:]) & tsMask
	return int64(tsMask-v) * 1000
}

// decodeColumn decodes family and qualifier from col and applies the column
// filters. The family is most often the previous cell's, and qualifiers of
// plain one-byte codes (no 0xFE/0xFF bytes) are decoded in this loop; the
// rest goes through enterFamily and decodeQualifier.
func (s *scanner) decodeColumn(col []byte) bool {
	i := s.sameFamily(col)
	if i < 0 {
		if !s.enterFamily(col) {
			return false
		}
		i = len(s.famName)
	}
	q := col[i+1:]
	n := len(q) - 1
	if n >= 0 && q[n] == fieldEnd && n <= cap(s.qualBuf) {
		out := s.qualBuf[:n]
		k := 0
		for ; k < n && q[k]-1 < 0xFE; k++ {
			out[k] = q[k] - 1
		}
		if k < n && !s.decodeQualifier(q) {
			s.corrupt(fmt.Errorf("qualifier: %w", errBadKey))
			return false
		}
		if k == n {
			s.qual = out
		}
	} else if !s.decodeQualifier(q) {
		s.corrupt(fmt.Errorf("qualifier: %w", errBadKey))
		return false
	}
	s.colOK = !s.f.hasColumn || s.f.column(s.famIdx, s.qual)
	return true
}

// decodeQualifier decodes the qualifier field q into qualBuf. The field is
// the last one before the timestamp, so its terminator must be q's last
// byte; this loop is parseField specialised for the per-cell hot path.
func (s *scanner) decodeQualifier(q []byte) bool {
	n := len(q) - 1
	if n < 0 || q[n] != fieldEnd {
		return false
	}
	if cap(s.qualBuf) < n {
		s.qualBuf = make([]byte, n, 2*n+16)
	}
	out := s.qualBuf[:n]
	for k := 0; k < n; k++ {
		if b := q[k]; b-1 < 0xFE { // neither a terminator nor a two-byte code
			out[k] = b - 1
			continue
		}
		var rest []byte
		var err error
		s.qual, s.qualBuf, rest, err = parseField(s.qualBuf[:0], q)
		return err == nil && len(rest) == 0
	}
	s.qual = out
	return true
}

// sameFamily returns the length of the family name at the start of col when
// it is the previous cell's family (the common case), else -1.
func (s *scanner) sameFamily(col []byte) int {
	name := s.famName
	if s.famIdx < 0 {
		return -1
	}
	if len(col) > len(name) && col[len(name)] == famTerm && equalShort(col[:len(name)], name) {
		return len(name)
	}
	return -1
}

// enterFamily looks up the family name at the start of col.
func (s *scanner) enterFamily(col []byte) bool {
	i := bytes.IndexByte(col, famTerm)
	if i < 0 {
		s.corrupt(fmt.Errorf("family: %w", errBadKey))
		return false
	}
	if s.famIdx = s.st.family(col[:i]); s.famIdx < 0 {
		s.corrupt(fmt.Errorf("unknown family %q", col[:i]))
		return false
	}
	s.famName, s.famMax = s.st.fams[s.famIdx].name, s.st.fams[s.famIdx].maxVersions
	s.famWord, s.famWordLen = 0, 0
	if n := len(s.famName) + 1; n <= 8 {
		for i := range len(s.famName) {
			s.famWord |= uint64(s.famName[i]) << (8 * i)
		}
		s.famWordLen = n
	}
	return true
}

// corrupt ends the scan with a CorruptionError naming the current row.
func (s *scanner) corrupt(err error) {
	s.err = &storage.CorruptionError{Table: s.t.name, Row: bytes.Clone(s.row), Qualifier: bytes.Clone(s.qual), Err: err}
	s.done = true
}

// finish ends the scan, keeping the iterator's error if there is one, and
// releases the iterator and the scanner's reference on the DB at once.
func (s *scanner) finish() {
	s.done = true
	if s.err == nil && s.it != nil {
		s.err = s.it.Error()
	}
	s.err = s.t.readError(s.err)
	s.closeIter()
}

// close releases the iterator and returns the sticky error.
func (s *scanner) close() error {
	s.closeIter()
	s.done = true
	s.err = s.t.readError(s.err)
	return s.err
}

// closeIter returns the iterator to the pool or closes it, then drops the
// DB reference that kept pebble open under it.
func (s *scanner) closeIter() {
	if s.it == nil {
		return
	}
	if err := s.t.db.release(pooledIter{it: s.it, gen: s.gen, reusable: s.reusable}); err != nil && s.err == nil {
		s.err = err
	}
	s.it = nil
	if e := s.eng; e != nil {
		s.eng = nil
		s.t.db.unref(e)
	}
}

// retiredErr is why a scan ends when its pebble opening is retired: the
// store closed, or pebble is being reopened (space.go), which a retry of
// the scan outlives.
func (s *scanner) retiredErr() error {
	if s.t.db.closed.Load() {
		return storage.ErrClosed
	}
	return errReopening
}

// scanHandle is the storage.Scanner given to callers. It drops its pooled
// scanner on Close, so a second Close or a late Next cannot touch a scanner
// that now serves someone else.
type scanHandle struct {
	s   *scanner
	err error
}

// Next advances to the next row, or batch of a row, and reports whether
// there is one.
func (h *scanHandle) Next() bool { return h.s != nil && h.s.nextBatch() }

// Row returns the current row; its slices are valid until the next call to
// Next or Close.
func (h *scanHandle) Row() storage.Row {
	if h.s == nil {
		return storage.Row{}
	}
	return h.s.batch
}

// Err returns the error that ended the scan, if any.
func (h *scanHandle) Err() error {
	if h.s == nil {
		return h.err
	}
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
	s.release()
	return h.err
}

// Scan streams the rows in [opts.Start, opts.Stop) that pass the filters.
// Invalid options yield a scanner whose Err says why.
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
		s.eng = t.db.ref()
	}
	return &scanHandle{s: s}
}

// oneRow reports whether [start, stop) selects the single row start.
func oneRow(start, stop []byte) bool {
	n := len(start)
	return n > 0 && len(stop) == n+1 && stop[n] == 0 && string(stop[:n]) == string(start)
}

// newScanner validates opts and opens a scanner over the rows they select.
func (t *table) newScanner(ctx context.Context, st *tableState, opts *storage.ScanOptions) (*scanner, error) {
	if err := storage.ValidateScan(st.spec, opts); err != nil {
		return nil, err
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
	s.reverse, s.limit, s.maxBatch = opts.Reverse, opts.Limit, opts.BatchLimit()
	s.f.reset(st, &opts.ReadOptions, t.db.readClock(st))
	s.countVersions = s.f.maxVersions > 0 || st.hasVersionLimit()
	s.lo, s.hi = t.rowBounds(s.lo, s.hi, opts.Start, opts.Stop)
	if oneRow(opts.Start, opts.Stop) {
		// [row, row‖0x00) holds one row: no data key lies between the row
		// prefix's successor and the coded stop, so the tighter bound
		// selects the same keys and lets next skip its row check.
		s.hi = prefixSuccessor(s.hi, s.lo)
	}
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
