package query

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// StoreDeleter deletes whole hour rows of the data table, as OpenTSDB's
// delete=true deletes every row its scan read: points of those hours
// outside the query range go too. Points still in the write path's head
// are not deleted; they reach the store at their next flush.
type StoreDeleter struct {
	// Table is the data table.
	Table storage.Table
	// Layout is its key layout.
	Layout rowkey.Layout
}

// DeleteRange deletes the rows of every series in tsuids whose hour
// overlaps [start, end] ms.
func (d *StoreDeleter) DeleteRange(ctx context.Context, tsuids []string, start, end int64) error {
	var row []byte
	for _, ts := range tsuids {
		for h := rowkey.BaseTime(start); h <= rowkey.BaseTime(end); h += 3600 {
			var err error
			if row, err = d.Layout.AppendRowKeyFromTSUID(row[:0], []byte(ts), h*1000); err != nil {
				return fmt.Errorf("delete series %x: %w", ts, err)
			}
			if err := d.Table.Delete(ctx, row); err != nil {
				return fmt.Errorf("delete row %x: %w", row, err)
			}
		}
	}
	return nil
}
