package ingesttest

import (
	"context"
	"errors"
	"sync"

	"github.com/tsd-db/tsd/storage"
)

// ErrUnavailable is what a HookTable's failing writes return: a retryable
// store error, as Bigtable's Unavailable becomes.
var ErrUnavailable = storage.MarkRetryable(errors.New("injected: store unavailable"))

// HookTable is a real table whose calls first run a hook, so a test can
// put another writer's work at an exact step of a flush or compaction, or
// make writes fail as an unavailable store does. It wraps, never replaces,
// the engine.
type HookTable struct {
	storage.Table
	mu   sync.Mutex
	fail bool                        // guarded by mu: writes return ErrUnavailable
	hook func(op string, row []byte) // guarded by mu: runs after a Get, before a write
}

// SetFail makes writes fail with ErrUnavailable, or work again.
func (t *HookTable) SetFail(v bool) { t.mu.Lock(); t.fail = v; t.mu.Unlock() }

// SetHook sets the function run after every Get and before every write
// (nil: none), with the operation's name and its row.
func (t *HookTable) SetHook(h func(op string, row []byte)) { t.mu.Lock(); t.hook = h; t.mu.Unlock() }

func (t *HookTable) before(op string, row []byte) error {
	t.mu.Lock()
	fail, hook := t.fail, t.hook
	t.mu.Unlock()
	if hook != nil {
		hook(op, row)
	}
	if fail {
		return ErrUnavailable
	}
	return nil
}

// Get reads through the engine, then runs the hook.
func (t *HookTable) Get(ctx context.Context, row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
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
func (t *HookTable) GetAppend(ctx context.Context, dst []storage.Cell, buf, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	dst, buf, err := t.Table.GetAppend(ctx, dst, buf, row, o)
	t.mu.Lock()
	hook := t.hook
	t.mu.Unlock()
	if hook != nil {
		hook("get", row)
	}
	return dst, buf, err
}

// Put runs the hook, then writes unless failing.
func (t *HookTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	if err := t.before("put", row); err != nil {
		return err
	}
	return t.Table.Put(ctx, row, cells)
}

// Apply runs the hook, then writes unless failing.
func (t *HookTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	if err := t.before("apply", nil); err != nil {
		return err
	}
	return t.Table.Apply(ctx, muts)
}

// Delete runs the hook, then deletes unless failing.
func (t *HookTable) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	if err := t.before("delete", row); err != nil {
		return err
	}
	return t.Table.Delete(ctx, row, dels...)
}

// CheckAndPut runs the hook, then writes unless failing.
func (t *HookTable) CheckAndPut(ctx context.Context, row []byte, family string, q, expected []byte, cells []storage.Cell) error {
	if err := t.before("checkandput", row); err != nil {
		return err
	}
	return t.Table.CheckAndPut(ctx, row, family, q, expected, cells)
}

// DeleteRange runs the hook, then deletes unless failing.
func (t *HookTable) DeleteRange(ctx context.Context, start, stop []byte) error {
	if err := t.before("deleterange", start); err != nil {
		return err
	}
	return t.Table.DeleteRange(ctx, start, stop)
}
