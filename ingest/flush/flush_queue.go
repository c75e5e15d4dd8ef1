package flush

import (
	"context"
	"log/slog"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// maxPendingQueue bounds the queue entries kept in memory while the meta
// table refuses them; beyond it entries are dropped (their rows keep
// several columns, which readers merge) and counted.
const maxPendingQueue = 1 << 20

// compactionQueue records rows awaiting compaction in the meta table:
// row schema.MetaCompactionPrefix ‖ data row key, family q, one column per
// column to fold in, named by that column's qualifier, empty value, cell
// timestamp the flush time. Entries are written after their data column,
// so an entry always names a column that was written before it.
type compactionQueue struct {
	meta    storage.Table
	log     *slog.Logger
	pending []queueEntry
	muts    []storage.Mutation
	cells   []storage.Cell
	dropped int64
}

// queueEntry is one column to record: row is the meta row key.
type queueEntry struct{ row, qual []byte }

func (q *compactionQueue) init(opts *FlushOptions, log *slog.Logger) {
	q.meta, q.log = opts.Meta, log
}

// add records column qual of data row key (both copied).
func (q *compactionQueue) add(key, qual []byte) {
	if q.meta == nil {
		return
	}
	if len(q.pending) >= maxPendingQueue {
		q.dropped++
		return
	}
	row := append(append(make([]byte, 0, len(schema.MetaCompactionPrefix)+len(key)), schema.MetaCompactionPrefix...), key...)
	q.pending = append(q.pending, queueEntry{row: row, qual: append([]byte(nil), qual...)})
}

// write writes the pending entries and returns how many it wrote. On
// failure they stay pending for the next flush and a warning is logged:
// the data is safe either way, only its compaction waits.
func (q *compactionQueue) write(ctx context.Context, now time.Time) int64 {
	if len(q.pending) == 0 {
		return 0
	}
	ts := now.UnixMilli() * 1000
	q.muts, q.cells = q.muts[:0], q.cells[:0]
	for _, e := range q.pending {
		q.cells = append(q.cells, storage.Cell{Family: schema.MetaFamilyCompaction, Qualifier: e.qual, Timestamp: ts})
	}
	for i, e := range q.pending {
		q.muts = append(q.muts, storage.Mutation{Row: e.row, Cells: q.cells[i : i+1 : i+1]})
	}
	if err := q.meta.Apply(ctx, q.muts); err != nil {
		q.log.Warn("ingest: compaction queue write failed; retrying at the next flush", "entries", len(q.pending), "err", err)
		return 0
	}
	if q.dropped > 0 {
		q.log.Warn("ingest: compaction queue entries dropped while the meta table refused writes", "dropped", q.dropped)
		q.dropped = 0
	}
	n := int64(len(q.pending))
	clear(q.pending)
	q.pending = q.pending[:0]
	return n
}
