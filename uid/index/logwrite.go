package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// maxLogTries bounds how many voided sequence numbers a writer skips
// before giving up on one record.
const maxLogTries = 16

// logRecord writes rec under a fresh sequence number. A number that a
// reader voided meanwhile (this process stalled past HoleTimeout) is
// given up with the rest of its block, and the record goes under a number
// of a new block, which every reader will still scan. A write that lands
// so late that readers may have voided its number and trimmed the void
// away (it succeeds then, unseen) is written again under a new number too:
// a record read twice is harmless.
func (ix *Index) logRecord(ctx context.Context, rec []byte) error {
	var buf [1]uint64
	for range maxLogTries {
		seqs, born, gaveUp, err := ix.takeAt(ctx, &ix.seqs, buf[:0], 1)
		ix.voidRange(ctx, gaveUp)
		if err != nil {
			return err
		}
		ok, err := ix.putRecord(ctx, seqs[0], rec)
		if err != nil {
			return err
		}
		if ok && ix.opts.Clock().Sub(born) < ix.opts.HoleTimeout*3/4 {
			return nil
		}
		// Readers void every hole of a stalled writer together: the rest of
		// this block is most likely voided too.
		ix.release(&ix.seqs, false)
	}
	return fmt.Errorf("log record: %d sequence numbers in a row were voided", maxLogTries)
}

// putRecord writes rec at seq unless the row holds a record. It reports
// whether the row now holds rec: a CheckAndPut retried after a transient
// error may find its own first attempt there.
func (ix *Index) putRecord(ctx context.Context, seq uint64, rec []byte) (bool, error) {
	row := appendLogRow(nil, seq)
	cells := []storage.Cell{{Family: schema.MetaFamilyIndex, Qualifier: qualRec, Value: rec}}
	err := ix.retry(ctx, func() error {
		return ix.meta.CheckAndPut(ctx, row, schema.MetaFamilyIndex, qualRec, nil, cells)
	})
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, storage.ErrConflict) {
		return false, fmt.Errorf("log record %d: %w", seq, err)
	}
	var got []storage.Cell
	err = ix.retry(ctx, func() (err error) {
		got, err = ix.meta.Get(ctx, row, readRec)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("log record %d: read back: %w", seq, err)
	}
	return len(got) == 1 && bytes.Equal(got[0].Value, rec), nil
}

// voidRange records that the sequence numbers r[0]..r[1] of a block this
// process gave up will never hold a record, so readers need not wait
// HoleTimeout for them. It is best effort: a failure only makes readers
// wait.
func (ix *Index) voidRange(ctx context.Context, r [2]uint64) {
	if r[0] > r[1] {
		return
	}
	if _, err := ix.putRecord(ctx, r[0], appendVoidRecord(nil, r[1])); err != nil {
		ix.opts.Logger.Debug("index: void unused log sequence numbers", "first", r[0], "last", r[1], "err", err)
	}
}

// abandonSeqs gives up the current block of sequence numbers: always
// (all, at Close) or when it has outlived its lifetime.
func (ix *Index) abandonSeqs(ctx context.Context, all bool) {
	ix.voidRange(ctx, ix.release(&ix.seqs, !all))
}
