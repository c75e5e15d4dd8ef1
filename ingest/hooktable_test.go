package ingest

import (
	"context"
	"errors"
	"sync"

	"github.com/tsd-db/tsd/storage"
)

// errUnavailable is what a hookTable's failing writes return: a retryable
// store error, as Bigtable's Unavailable becomes.
var errUnavailable = storage.MarkRetryable(errors.New("injected: store unavailable"))

// hookTable is a real table whose calls first run a hook, so a test can
// put another writer's work at an exact step of a flush or compaction, or
// make writes fail as an unavailable store does. It wraps, never replaces,
// the engine.
type hookTable struct {
	storage.Table
	mu   sync.Mutex
	fail bool                        // guarded by mu: writes return errUnavailable
	hook func(op string, row []byte) // guarded by mu: runs after a Get, before a write
}

func (t *hookTable) setFail(v bool) { t.mu.Lock(); t.fail = v; t.mu.Unlock() }

func (t *hookTable) setHook(h func(op string, row []byte)) { t.mu.Lock(); t.hook = h; t.mu.Unlock() }

func (t *hookTable) before(op string, row []byte) error {
	t.mu.Lock()
	fail, hook := t.fail, t.hook
	t.mu.Unlock()
	if hook != nil {
		hook(op, row)
	}
	if fail {
		return errUnavailable
	}
	return nil
}

func (t *hookTable) Get(ctx context.Context, row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
	cells, err := t.Table.Get(ctx, row, o)
	t.mu.Lock()
	hook := t.hook
	t.mu.Unlock()
	if hook != nil {
		hook("get", row)
	}
	return cells, err
}

// GetAppend runs the hook after the read, as Get does.
func (t *hookTable) GetAppend(ctx context.Context, dst []storage.Cell, buf, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	dst, buf, err := t.Table.GetAppend(ctx, dst, buf, row, o)
	t.mu.Lock()
	hook := t.hook
	t.mu.Unlock()
	if hook != nil {
		hook("get", row)
	}
	return dst, buf, err
}

func (t *hookTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := t.before("put", row); err != nil {
		return err
	}
	return t.Table.Put(ctx, row, cells)
}

func (t *hookTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	if err := t.before("apply", nil); err != nil {
		return err
	}
	return t.Table.Apply(ctx, muts)
}

func (t *hookTable) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	if err := t.before("delete", row); err != nil {
		return err
	}
	return t.Table.Delete(ctx, row, dels...)
}

func (t *hookTable) CheckAndPut(ctx context.Context, row []byte, family string, q, expected []byte, cells []storage.Cell) error {
	if err := t.before("checkandput", row); err != nil {
		return err
	}
	return t.Table.CheckAndPut(ctx, row, family, q, expected, cells)
}

func (t *hookTable) DeleteRange(ctx context.Context, start, stop []byte) error {
	if err := t.before("deleterange", start); err != nil {
		return err
	}
	return t.Table.DeleteRange(ctx, start, stop)
}
