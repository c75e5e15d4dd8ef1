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
// series already known).
func (ix *Index) scanSeries(ctx context.Context) error {
	start, stop := rowRange(tagTSUID)
	sc := ix.meta.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: readIndex})
	defer sc.Close()
	var r seriesRow
	for sc.Next() {
		c := sc.Cell()
		if !bytes.Equal(c.Row, r.row) {
			ix.addRow(&r)
			r.reset(c.Row)
		}
		r.cell(c)
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
