package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// claimWorkers bounds the concurrent TSUID claims of one batch.
const claimWorkers = 64

// create persists new series and adds them to memory, in this order:
//  1. take an id per series from the reserved block;
//  2. claim each series row (0x01 'T' ‖ TSUID) with one CheckAndPut
//     expecting no id, writing the id and the span; a loser adopts the id
//     already there (its own is skipped) and writes its span there;
//  3. log one recNew record per maxItemsPerRecord series, so that running
//     daemons learn of them.
//
// A crash after 2 leaves a series the log does not announce: Indexes
// opened later load it, running ones learn it when a registration of the
// TSUID adopts it (and logs it again) or when they resync. items' ids are
// set; their TSUIDs are not retained.
func (ix *Index) create(ctx context.Context, items []item) ([]*seriesEntry, error) {
	ids, _, err := ix.take(ctx, &ix.ids, make([]uint64, 0, len(items)), len(items))
	if err != nil {
		return nil, err
	}
	for i := range items {
		items[i].id = uint32(ids[i])
	}
	if err := ix.claimAll(ctx, items); err != nil {
		return nil, err
	}
	for rest := items; len(rest) > 0; {
		n := min(len(rest), maxItemsPerRecord)
		if err := ix.logRecord(ctx, appendNewRecord(nil, rest[:n])); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return ix.addCreated(items)
}

func (ix *Index) addCreated(items []item) ([]*seriesEntry, error) {
	es := make([]*seriesEntry, len(items))
	for i, it := range items {
		e, _ := ix.mem.add(it.id, it.tsuid, it.sp)
		if e == nil {
			ix.stats.conflicts.Add(1)
			return nil, &storage.CorruptionError{Table: ix.meta.Spec().Name, Row: appendTSUIDRow(nil, it.tsuid),
				Err: fmt.Errorf("series id %d names two TSUIDs, one of them %x", it.id, it.tsuid)}
		}
		e.widen(it.sp)
		ix.takePending(e)
		es[i] = e
		if ix.opts.OnNewSeries != nil {
			ix.opts.OnNewSeries(it.tsuid)
		}
	}
	return es, nil
}

// claimAll claims every item's TSUID, concurrently when there are several.
func (ix *Index) claimAll(ctx context.Context, items []item) error {
	if len(items) == 1 {
		return ix.claim(ctx, &items[0])
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range min(claimWorkers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := ix.claim(ctx, &items[i]); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// claim writes the series row of it (id and span) unless it has an id;
// otherwise it adopts the id found there (another registration won, or our
// own retried write did) and widens the stored span.
func (ix *Index) claim(ctx context.Context, it *item) error {
	row := appendTSUIDRow(nil, it.tsuid)
	cells := []storage.Cell{{Family: schema.MetaFamilyIndex, Qualifier: qualID, Value: be32(it.id)}}
	cells = hourCells(cells, it.sp)
	err := ix.retry(ctx, func() error {
		return ix.meta.CheckAndPut(ctx, row, schema.MetaFamilyIndex, qualID, nil, cells)
	})
	if err == nil {
		ix.stats.created.Add(1)
		return nil
	}
	if !errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("claim tsuid %x: %w", it.tsuid, err)
	}
	w, err := ix.readClaim(ctx, row)
	if err != nil {
		return err
	}
	if w == it.id { // our first attempt had applied
		ix.stats.created.Add(1)
		return nil
	}
	it.id = w
	ix.stats.adopted.Add(1)
	if it.sp.empty() {
		return nil
	}
	spans := hourCells(nil, it.sp)
	if err := ix.retry(ctx, func() error { return ix.meta.Put(ctx, row, spans) }); err != nil {
		return fmt.Errorf("widen adopted series %x: %w", it.tsuid, err)
	}
	return nil
}

func (ix *Index) readClaim(ctx context.Context, row []byte) (uint32, error) {
	var got []storage.Cell
	err := ix.retry(ctx, func() (err error) {
		got, err = ix.meta.Get(ctx, row, readID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read claim %x: %w", row, err)
	}
	if len(got) != 1 || len(got[0].Value) != 4 || binary.BigEndian.Uint32(got[0].Value) == 0 {
		return 0, &storage.CorruptionError{Table: ix.meta.Spec().Name, Row: row, Qualifier: qualID,
			Err: errors.New("series id is not 4 non-zero bytes")}
	}
	return binary.BigEndian.Uint32(got[0].Value), nil
}
