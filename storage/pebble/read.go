package pebble

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tsd-db/tsd/storage"
)

// Get reads one row through an iterator bounded to the row's keys. A
// prefix seek (SeekPrefixGE) would consult the row bloom filters, but its
// filter probes and per-key prefix checks cost more than they save: in the
// paired benchmarks a bounded iterator is about 10 % faster for present
// rows and no slower for absent ones (the bounds already restrict each
// level to the sstables overlapping the row). The iterator comes from the
// DB's pool when no write committed since it was made ("Iterator reuse" in
// doc.go), which spares NewIter, the bulk of a one-cell Get. The returned
// cells share one freshly allocated buffer owned by the caller.
func (t *table) Get(ctx context.Context, row []byte, opts *storage.ReadOptions) ([]storage.Cell, error) {
	cells, _, err := t.GetAppend(ctx, nil, nil, row, opts)
	return cells, err
}

// GetAppend is Get appending to the caller's dst and buf: with both reused
// from row to row it allocates nothing.
func (t *table) GetAppend(ctx context.Context, dst []storage.Cell, buf []byte, row []byte, opts *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	if err := ctx.Err(); err != nil {
		return dst, buf, err
	}
	st, err := t.begin()
	if err != nil {
		return dst, buf, err
	}
	defer t.db.leave()
	if err := storage.ValidateRow(row); err != nil {
		return dst, buf, fmt.Errorf("get from table %q: %w", t.name, err)
	}
	if err := storage.ValidateRead(st.spec, opts); err != nil {
		return dst, buf, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	s := scannerPool.Get().(*scanner)
	defer s.release()
	s.t, s.st, s.ctx = t, st, ctx
	s.f.reset(st, opts, t.db.readClock(st))
	s.countVersions = s.f.maxVersions > 0 || st.hasVersionLimit()
	s.lo = appendRowPrefix(s.lo[:0], t.id, row)
	s.hi = prefixSuccessor(s.hi, s.lo)
	// The row is known: entering it needs no decoding.
	s.rowPrefix, s.row = append(s.rowPrefix[:0], s.lo...), row
	s.lastRow = true
	if err := s.open(); err != nil {
		return dst, buf, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	s.walkRow()
	if err := s.close(); err != nil {
		return dst, buf, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	if len(s.meta) == 0 {
		// Bare sentinel: readers probe absent rows often (a query's empty
		// hours), and formatting the row would cost more than the read.
		return dst, buf, storage.ErrNotFound
	}
	dst, buf = appendRow(dst, buf, s)
	return dst, buf, nil
}

// appendRow appends the row walkRow gathered to the caller's memory: the
// scratch bytes (row key, then each cell's qualifier and value) to buf in
// one append, so buf grows at most once and before any cell points into
// it, then one cell per cellMeta to dst, whatever the number of cells.
func appendRow(dst []storage.Cell, buf []byte, s *scanner) ([]storage.Cell, []byte) {
	meta, base := s.meta, len(buf)
	buf = append(buf, s.data...)
	k := len(dst)
	if dst == nil {
		dst = make([]storage.Cell, 0, len(meta)) // Get's: exactly sized
	}
	dst = slices.Grow(dst, len(meta))[:k+len(meta)]
	fillCells(dst[k:], buf[base:], meta, len(s.row), s.st.fams)
	return dst, buf
}

// fillCells points out[i] at the cell meta[i] locates in data, a gathered
// row: the row key in data[:keyLen], then each cell's qualifier and value,
// each slice capped at its own bytes.
func fillCells(out []storage.Cell, data []byte, meta []cellMeta, keyLen int, fams []famInfo) {
	row := data[:keyLen:keyLen]
	start := keyLen
	for i := range out {
		m, c := &meta[i], &out[i]
		// Field by field: a composite literal is built on the stack and
		// copied, which costs more per cell.
		c.Row, c.Family, c.Timestamp = row, fams[m.fam].name, m.ts
		c.Qualifier, c.Value = data[start:m.qEnd:m.qEnd], data[m.qEnd:m.vEnd:m.vEnd]
		start = m.vEnd
	}
}

// walkRow gathers the visible cells of Get's row into data and meta. It is
// nextBatch's work without the bookkeeping a Get does not need: the bounds
// hold one row read forward, with no row limit, regex or batch bound, and
// the DB cannot close under the call.
func (s *scanner) walkRow() {
	data, meta := append(s.data[:0], s.row...), s.meta[:0]
	it := s.it
	for ok, n := it.First(), 1; ok; ok, n = it.Next(), n+1 {
		if n&255 == 0 {
			if s.err = s.ctx.Err(); s.err != nil {
				break
			}
		}
		visible := false // emit by hand, as in next
		if s.f.plain {
			visible = s.emitPlain(it.Key())
		} else {
			visible = s.emitAny(it.Key())
		}
		if !visible {
			if s.done {
				break
			}
			continue
		}
		val, err := it.ValueAndErr()
		if err != nil {
			s.err = err
			break
		}
		data, meta = gather(data, meta, s.qual, val, s.ts, s.famIdx)
	}
	s.data, s.meta = data, meta
	s.finish()
}

// gather appends one visible cell to a row being gathered: its qualifier
// and value to data, where they end to meta.
func gather(data []byte, meta []cellMeta, q, v []byte, ts int64, fam int) ([]byte, []cellMeta) {
	data = appendShort(data, q)
	qEnd := len(data)
	data = appendShort(data, v)
	return data, append(meta, cellMeta{qEnd: qEnd, vEnd: len(data), ts: ts, fam: int32(fam)})
}

// appendShort is append(dst, src...) that copies src of up to 16 bytes
// (qualifiers, OpenTSDB's values) inline instead of calling memmove.
func appendShort(dst, src []byte) []byte {
	n, k := len(dst), len(src)
	if k > 16 || cap(dst)-n < 16 {
		return append(dst, src...)
	}
	dst = dst[:n+k]
	d := dst[n:]
	if k >= 8 {
		// Two overlapping words cover 8 to 16 bytes.
		binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(src))
		binary.LittleEndian.PutUint64(d[k-8:], binary.LittleEndian.Uint64(src[k-8:]))
		return dst
	}
	for i := range src {
		d[i] = src[i]
	}
	return dst
}

// cellMeta locates one cell of a gathered row in its buffer: its qualifier
// ends at qEnd, its value at vEnd.
type cellMeta struct {
	ts         int64
	qEnd, vEnd int
	fam        int32
}
