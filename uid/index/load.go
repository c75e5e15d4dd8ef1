package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"

	"github.com/tsd-db/tsd/storage"
)

// seriesRow gathers the cells of one series row during a scan.
type seriesRow struct {
	row   []byte
	tsuid []byte
	sp    span
	err   error
}

func (r *seriesRow) reset(row []byte) {
	r.row = append(r.row[:0], row...)
	r.tsuid = r.tsuid[:0]
	r.sp, r.err = noSpan, nil
}

// scanSeries reads every series row into memory (merging spans into
// series already known).
func (ix *Index) scanSeries(ctx context.Context) error {
	start, stop := rowRange(tagSeries)
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

// cell takes one cell of the row.
func (r *seriesRow) cell(c storage.Cell) {
	switch {
	case bytes.Equal(c.Qualifier, qualKey):
		r.tsuid = append(r.tsuid[:0], c.Value...)
	case bytes.Equal(c.Qualifier, qualFirst) && len(c.Value) == 4:
		r.sp.first = binary.BigEndian.Uint32(c.Value)
	case bytes.Equal(c.Qualifier, qualLast) && len(c.Value) == 4:
		r.sp.last = binary.BigEndian.Uint32(c.Value)
	case bytes.Equal(c.Qualifier, qualFirst) || bytes.Equal(c.Qualifier, qualLast):
		r.err = errors.New("hour cell is not 4 bytes")
	}
}

func (ix *Index) addRow(r *seriesRow) {
	if len(r.row) == 0 {
		return
	}
	id, err := parseSeriesRow(r.row)
	switch {
	case err != nil:
	case r.err != nil:
		err = r.err
	case len(r.tsuid) == 0:
		err = errors.New("series row without a TSUID")
	case id == 0:
		err = errors.New("series id 0")
	default:
		err = checkTSUID(ix.opts.Widths, r.tsuid)
	}
	if err != nil {
		ix.corrupt(r.row, err)
		return
	}
	ix.addStored(id, r.tsuid, r.sp)
}
