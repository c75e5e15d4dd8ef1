package opentsdb

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// HeadDeleter removes points still in the write path's head (head.Head
// in ingest/head implements it; query never imports ingest). DeleteRange
// deletes the points of the series (TSUIDs, raw bytes) with start <= T <=
// end ms, durably: a restart does not bring them back, and points written
// after it returns are kept. It returns once no flush is still writing deleted
// points to the store.
type HeadDeleter interface {
	DeleteRange(ctx context.Context, tsuids []string, start, end int64) error
}

// StoreDeleter deletes whole hour rows of the data table, as OpenTSDB's
// delete=true deletes every row its scan read: points of those hours
// outside the query range go too. With Head set it first deletes the
// range's points from the write path's head, so they do not reach the
// store at the next flush nor come back from the head's log.
type StoreDeleter struct {
	// Table is the data table.
	Table storage.Table
	// Layout is its key layout.
	Layout rowkey.Layout
	// Head holds the unflushed points. Default nil: only stored rows are
	// deleted.
	Head HeadDeleter
}

// DeleteRange deletes the series' points of every hour overlapping
// [start, end] ms, from the head and then the stored rows, so a point of
// those hours is gone whether or not it had been flushed; the head goes
// first so that a row a flush was writing is stored by the time its row
// is deleted.
func (d *StoreDeleter) DeleteRange(ctx context.Context, tsuids []string, start, end int64) error {
	if d.Head != nil {
		hs, he := rowkey.BaseTime(start)*1000, (rowkey.BaseTime(end)+3600)*1000-1
		if err := d.Head.DeleteRange(ctx, tsuids, hs, he); err != nil {
			return fmt.Errorf("delete from the head: %w", err)
		}
	}
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
