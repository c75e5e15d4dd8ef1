package bigtable

import (
	"bytes"
	"context"
	"fmt"

	bt "cloud.google.com/go/bigtable"
)

// DeleteRange removes every row in [start, stop). When the range is exactly
// the rows starting with one prefix ([p, successor of p), a whole metric
// for example) it is one DropRowRange, which Bigtable runs server-side; any
// other range (retention's time-bounded ones) is scanned for keys and
// deleted row by row through ApplyBulk. DropRowRange is an admin request, so
// with CreateTables off every range is scanned and deleted. Neither way is
// atomic: a row written meanwhile may survive.
func (t *table) DeleteRange(ctx context.Context, start, stop []byte) error {
	if stop != nil && (len(stop) == 0 || bytes.Compare(start, stop) >= 0) {
		return t.db.callOnce(ctx, "delete range "+t.name, func(context.Context) error { return nil })
	}
	if p, ok := wholePrefix(start, stop); ok && t.db.createTables() {
		return t.dropPrefix(ctx, p)
	}
	return t.scanDelete(ctx, start, stop)
}

// wholePrefix reports whether [start, stop) is exactly the keys that start
// with start.
func wholePrefix(start, stop []byte) ([]byte, bool) {
	end := prefixEnd(string(start))
	if end == "" {
		return start, stop == nil
	}
	return start, stop != nil && string(stop) == end
}

func (t *table) dropPrefix(ctx context.Context, p []byte) error {
	step := fmt.Sprintf("drop row range %s prefix %q", t.name, p)
	return t.db.call(ctx, step, func(ctx context.Context) error {
		if len(p) == 0 {
			return t.db.admin.DropAllRows(ctx, t.name)
		}
		return t.db.admin.DropRowRange(ctx, t.name, string(p))
	})
}

// scanDelete reads the range's keys a chunk at a time (one cell per row,
// values stripped, no read-time limits so expired rows go too) and deletes
// each chunk's rows.
func (t *table) scanDelete(ctx context.Context, start, stop []byte) error {
	keysOnly := bt.ChainFilters(bt.CellsPerRowLimitFilter(1), bt.StripValueFilter())
	lo := start
	for {
		var keys []string
		err := t.db.call(ctx, "delete range "+t.name, func(ctx context.Context) error {
			keys = keys[:0]
			return t.bt.ReadRows(ctx, bt.NewRange(string(lo), string(stop)), func(r bt.Row) bool {
				keys = append(keys, r.Key())
				return true
			}, bt.RowFilter(keysOnly), bt.LimitRows(int64(t.db.opts.ScanChunkRows)))
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		if err := t.deleteRows(ctx, keys); err != nil {
			return err
		}
		if len(keys) < t.db.opts.ScanChunkRows {
			return nil
		}
		lo = append([]byte(keys[len(keys)-1]), 0)
	}
}

func (t *table) deleteRows(ctx context.Context, keys []string) error {
	rows := make([]rowMutation, len(keys))
	for i, k := range keys {
		rows[i] = rowMutation{row: k, m: bt.NewMutation()}
		rows[i].m.DeleteRow()
		rows[i].count("", "")
	}
	for len(rows) > 0 {
		n := t.chunkLen(rows)
		if err := t.applyChunk(ctx, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
