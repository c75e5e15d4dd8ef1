package storagetest

import (
	"context"

	"github.com/tsd-db/tsd/storage"
)

// CutRows returns tbl with every scan's MaxBatchBytes set to maxBatchBytes,
// so that a reader's test meets rows cut into Partial batches, as rows
// larger than the default bound (64 MiB) arrive, without writing such rows.
// With 1, every cell is a batch of its own.
func CutRows(tbl storage.Table, maxBatchBytes int) storage.Table {
	return cutTable{Table: tbl, max: maxBatchBytes}
}

type cutTable struct {
	storage.Table
	max int
}

func (t cutTable) Scan(ctx context.Context, o *storage.ScanOptions) storage.Scanner {
	var so storage.ScanOptions
	if o != nil {
		so = *o
	}
	so.MaxBatchBytes = t.max
	return t.Table.Scan(ctx, &so)
}
