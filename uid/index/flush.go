package index

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// Flush persists every span extension made since the last Flush: the
// series rows' hour cells, then one change record per 1024 series for the
// other daemons. The loop calls it every RefreshInterval and
// Close calls it last. What it could not write stays queued.
func (ix *Index) Flush(ctx context.Context) error {
	ix.dirty.Lock()
	list := ix.dirty.list
	ix.dirty.list = nil
	ix.dirty.Unlock()
	for len(list) > 0 {
		n := min(len(list), maxItemsPerRecord)
		if err := ix.flushSpans(ctx, list[:n]); err != nil {
			ix.requeue(list[:n], list[n:])
			return err
		}
		list = list[n:]
	}
	return nil
}

// flushSpans writes the spans of es. Each entry's dirty flag is cleared
// before its span is read, so a concurrent extension queues it again.
func (ix *Index) flushSpans(ctx context.Context, es []*seriesEntry) error {
	items := make([]item, 0, len(es))
	muts := make([]storage.Mutation, 0, len(es))
	for _, e := range es {
		e.dirty.Store(false)
		if sp := e.span(); !sp.empty() {
			items = append(items, item{id: e.id, sp: sp})
			muts = append(muts, storage.Mutation{Row: appendTSUIDRow(nil, []byte(e.tsuid)), Cells: hourCells(nil, sp)})
		}
	}
	if len(items) == 0 {
		return nil
	}
	if err := ix.retry(ctx, func() error { return ix.meta.Apply(ctx, muts) }); err != nil {
		return fmt.Errorf("write series spans: %w", err)
	}
	if err := ix.logRecord(ctx, appendHoursRecord(nil, items)); err != nil {
		return err
	}
	ix.stats.spans.Add(uint64(len(es)))
	return nil
}

// requeue queues again entries whose flush failed (their flags were
// cleared) and entries not tried yet (flags still set).
func (ix *Index) requeue(failed, untried []*seriesEntry) {
	for _, e := range failed {
		ix.markDirty(e)
	}
	ix.dirty.Lock()
	ix.dirty.list = append(ix.dirty.list, untried...)
	ix.dirty.Unlock()
}
