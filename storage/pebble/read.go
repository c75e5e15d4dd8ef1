package pebble

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// Get reads one row through a prefix iterator, which lets the row bloom
// filters skip sstables. The returned cells share one freshly allocated
// buffer owned by the caller.
func (t *table) Get(ctx context.Context, row []byte, opts *storage.ReadOptions) ([]storage.Cell, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := t.begin()
	if err != nil {
		return nil, err
	}
	defer t.db.leave()
	if err := storage.ValidateRow(row); err != nil {
		return nil, fmt.Errorf("get from table %q: %w", t.name, err)
	}
	if err := storage.ValidateRead(st.spec, opts); err != nil {
		return nil, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	s := scannerPool.Get().(*scanner)
	defer s.release()
	s.t, s.st, s.ctx, s.prefixMode = t, st, ctx, true
	s.f.reset(st, opts, t.db.nowMicros())
	s.lo = appendRowPrefix(s.lo[:0], t.id, row)
	s.hi = prefixSuccessor(s.hi, s.lo)
	if err := s.open(); err != nil {
		return nil, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	cells := collectRow(s)
	if err := s.close(); err != nil {
		return nil, fmt.Errorf("get from table %q row %q: %w", t.name, row, err)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("get from table %q row %q: %w", t.name, row, storage.ErrNotFound)
	}
	return cells, nil
}

// collectRow copies every cell the scanner yields into one buffer.
func collectRow(s *scanner) []storage.Cell {
	var cells []storage.Cell
	var buf []byte
	var offs []int
	for s.next() {
		c := &s.cell
		if len(cells) == 0 {
			buf = append(buf, c.Row...)
		}
		offs = append(offs, len(buf))
		buf = append(buf, c.Qualifier...)
		offs = append(offs, len(buf))
		buf = append(buf, c.Value...)
		cells = append(cells, storage.Cell{Family: c.Family, Timestamp: c.Timestamp})
	}
	if len(cells) == 0 {
		return nil
	}
	row := buf[:offs[0]:offs[0]]
	for i := range cells {
		q, v, e := offs[2*i], offs[2*i+1], len(buf)
		if 2*i+2 < len(offs) {
			e = offs[2*i+2]
		}
		cells[i].Row, cells[i].Qualifier, cells[i].Value = row, buf[q:v:v], buf[v:e:e]
	}
	return cells
}
