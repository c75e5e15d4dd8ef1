package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// seriesRow gathers the cells of one series row during a scan.
type seriesRow struct {
	row []byte
	id  uint32
	sp  span
	err error
}

func (r *seriesRow) reset(row []byte) {
	r.row = append(r.row[:0], row...)
	r.id, r.sp, r.err = 0, noSpan, nil
}

// scanSeries reads every series row into memory (merging spans into
// series already known). Rows the store cannot read back (a damaged file)
// are skipped with one error line: their series stay unknown until the
// store is repaired and the index rebuilt.
func (ix *Index) scanSeries(ctx context.Context) error {
	start, stop := rowRange(tagTSUID)
	return ix.skipDamaged(start, stop, func(start []byte) error { return ix.scanSeriesFrom(ctx, start, stop) })
}

// skipDamaged runs scan from start, and again from the end of each damaged
// range of rows it reports, until it ends or fails otherwise.
func (ix *Index) skipDamaged(start, stop []byte, scan func(start []byte) error) error {
	for {
		err := scan(start)
		var dr *storage.DamagedRangeError
		if !errors.As(err, &dr) {
			return err
		}
		if ix.firstDamage(start) {
			ix.stats.corrupt.Add(1)
			ix.opts.Logger.Error("index: skipping rows the store cannot read back; their series stay unknown until the store is repaired (tsd repair) and the index rebuilt (tsd index rebuild)",
				"from", fmt.Sprintf("%x", start), "err", err)
		}
		if dr.To == nil || bytes.Compare(dr.To, start) <= 0 || bytes.Compare(dr.To, stop) >= 0 {
			return nil
		}
		start = dr.To
	}
}

// firstDamage reports whether a damaged range met reading from start is
// new; it remembers a bounded number of them.
func (ix *Index) firstDamage(start []byte) bool {
	d := &ix.damaged
	d.Lock()
	defer d.Unlock()
	if d.seen[string(start)] {
		return false
	}
	if d.seen == nil {
		d.seen = make(map[string]bool)
	}
	if len(d.seen) < 64 {
		d.seen[string(start)] = true
	}
	return true
}

// scanSeriesFrom reads the series rows in [start, stop).
func (ix *Index) scanSeriesFrom(ctx context.Context, start, stop []byte) error {
	sc := ix.meta.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: readIndex})
	defer sc.Close()
	var r seriesRow
	for more := false; sc.Next(); {
		row := sc.Row()
		if !more { // a new row, not the next batch of a Partial one
			ix.addRow(&r)
			r.reset(row.Key)
		}
		for _, c := range row.Cells {
			r.cell(c)
		}
		more = row.Partial
	}
	ix.addRow(&r)
	return sc.Close()
}

// cell takes one cell of the row; other qualifiers are ignored.
func (r *seriesRow) cell(c storage.Cell) {
	var dst *uint32
	switch {
	case bytes.Equal(c.Qualifier, qualID):
		dst = &r.id
	case bytes.Equal(c.Qualifier, qualFirst):
		dst = &r.sp.first
	case bytes.Equal(c.Qualifier, qualLast):
		dst = &r.sp.last
	default:
		return
	}
	if len(c.Value) != 4 {
		r.err = fmt.Errorf("cell %q is not 4 bytes", c.Qualifier)
		return
	}
	*dst = binary.BigEndian.Uint32(c.Value)
}

func (ix *Index) addRow(r *seriesRow) {
	if len(r.row) == 0 {
		return
	}
	tsuid, err := parseTSUIDRow(r.row)
	switch {
	case err != nil:
	case r.err != nil:
		err = r.err
	case r.id == 0:
		err = errors.New("series row without an id")
	default:
		err = checkTSUID(ix.opts.Widths, tsuid)
	}
	if err != nil {
		ix.corrupt(r.row, err)
		return
	}
	ix.addStored(r.id, tsuid, r.sp)
}
