package read

import (
	"context"
	"encoding/binary"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// scanSink takes the selected rows of a bucket scan, a batch of cells at
// a time: a row whose cells pass the scan's byte bound arrives in several
// (storage.Row.Partial).
type scanSink interface {
	// cells takes a batch of the cells of a row of series id (its index
	// in the selection) with base time baseSec, whose key is in rr.key;
	// first and last mark the row's first and last batch. The cells are
	// the scanner's, valid during the call.
	cells(rr *rowReader, id int32, baseSec int64, cells []rowkey.Cell, first, last bool) error
}

// otherSink is a scanSink told of the rows a scan met that are not
// selected, by their base time (fetchtrust.go records whole hours).
type otherSink interface {
	scanSink
	other(baseSec int64)
}

// scanBucket scans the rows of sel's metric in one salt bucket over sel's
// range and gives sink those of the series in ids (TSUID -> index in the
// selection). Rows arrive in key order: a series' rows in time order.
func (r *Reader) scanBucket(ctx context.Context, rr *rowReader, bucket int, sel *Selection, ids map[string]int32, sink scanSink) error {
	return r.scanTable(ctx, rr, r.opts.Data, bucket, sel.Start, sel.End, sel, ids, sink)
}

// scanTable is scanBucket over table tbl from start to end (ms):
// the rollup tables' rows have the data table's keys, their base times
// those of their rollup rows (VisitCells' scan plan).
func (r *Reader) scanTable(ctx context.Context, rr *rowReader, tbl storage.Table, bucket int, start, end int64, sel *Selection,
	ids map[string]int32, sink scanSink) error {
	l := &r.opts.Layout
	mw := l.Widths.Metric
	prefix := l.Salt.Width() + mw // where the base time starts
	tsuid := append(rr.tsuid[:0], sel.Series[0].TSUID[:mw]...)
	defer func() { rr.tsuid = tsuid[:0] }()
	begin, stop := l.BucketRange(bucket, tsuid, start, end)
	others, _ := sink.(otherSink)
	r.c.scans.Add(1)
	sc := tbl.Scan(ctx, &storage.ScanOptions{Start: begin, Stop: stop,
		ReadOptions: storage.ReadOptions{Families: r.families}})
	defer sc.Close()
	var (
		id   int32 = -1
		base int64
		more bool // the last batch was Partial: the next continues its row
	)
	for sc.Next() {
		row := sc.Row()
		first := !more
		more = row.Partial
		if first {
			id = -1
			if len(row.Key) >= prefix+rowkey.TimestampBytes {
				tsuid = append(tsuid[:mw], row.Key[prefix+rowkey.TimestampBytes:]...)
				base = int64(binary.BigEndian.Uint32(row.Key[prefix:]))
				if i, ok := ids[string(tsuid)]; ok {
					id = i
					rr.key = append(rr.key[:0], row.Key...)
				} else if others != nil {
					others.other(base)
				}
			}
		}
		if id < 0 {
			continue
		}
		if err := sink.cells(rr, id, base, row.Cells, first, !row.Partial); err != nil {
			return err
		}
	}
	return sc.Err()
}

// gather returns a scanned row's cells once its last batch is in: a
// whole row as the scanner holds it, the batches of a cut one copied to
// rr's arena as they come (ok false until the last).
func (rr *rowReader) gather(cells []rowkey.Cell, first, last bool) (_ []rowkey.Cell, ok bool) {
	if first && last {
		return cells, true
	}
	if first {
		rr.arena, rr.offs = rr.arena[:0], rr.offs[:0]
	}
	for i := range cells {
		rr.arena, rr.offs = appendCell(rr.arena, rr.offs, &cells[i])
	}
	if !last {
		return nil, false
	}
	rr.cellBuf = appendArenaCells(rr.cellBuf[:0], rr.arena, rr.offs)
	return rr.cellBuf, true
}

// selectionIDs maps sel's TSUIDs to their indexes, in ids if not nil.
func selectionIDs(ids map[string]int32, sel *Selection) map[string]int32 {
	if ids == nil {
		ids = make(map[string]int32, len(sel.Series))
	}
	for i := range sel.Series {
		ids[sel.Series[i].TSUID] = int32(i)
	}
	return ids
}
