package uid

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// UIDs is the UID table of one store: lookups both ways through bounded
// caches, and assignment by OpenTSDB's protocol. It is safe for concurrent
// use. Several UIDs (in one process or in several daemons) may share one
// table; each name still gets exactly one UID.
type UIDs struct {
	tbl   storage.Table
	opts  Options
	log   *slog.Logger
	kinds [NumKinds]kindState
}

// kindState is everything UIDs keeps per kind.
type kindState struct {
	width      int
	maxID      ID
	autoCreate bool
	names      nameCache
	ids        idCache
	flights    flightGroup
	// Counters, for Stats.
	assigned         atomic.Uint64
	racesLost        atomic.Uint64
	reverseConflicts atomic.Uint64
}

// Open creates the UID table if it is missing and returns a UIDs on it.
func Open(ctx context.Context, db storage.DB, opts *Options) (*UIDs, error) {
	o := resolveOptions(opts)
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := db.EnsureTable(ctx, TableSpec(o.Table)); err != nil {
		return nil, fmt.Errorf("create uid table %q: %w", o.Table, err)
	}
	tbl, err := db.Table(ctx, o.Table)
	if err != nil {
		return nil, fmt.Errorf("open uid table %q: %w", o.Table, err)
	}
	return New(tbl, &o)
}

// New returns a UIDs on an open table; opts.Table is ignored.
func New(tbl storage.Table, opts *Options) (*UIDs, error) {
	o := resolveOptions(opts)
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := checkSpec(tbl.Spec()); err != nil {
		return nil, err
	}
	u := &UIDs{tbl: tbl, opts: o, log: o.Logger}
	for _, k := range Kinds {
		ks := &u.kinds[k]
		ks.width = o.width(k)
		ks.maxID = MaxIDForWidth(ks.width)
		ks.autoCreate = o.autoCreate(k)
		ks.names.init(o.NameCacheSize)
		ks.ids.init(o.IDCacheSize)
	}
	return u, nil
}

func resolveOptions(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	return o
}

// Table returns the underlying storage table.
func (u *UIDs) Table() storage.Table { return u.tbl }

// Format returns the store format whose name encoding is in use.
func (u *UIDs) Format() schema.Format { return u.opts.Format }

// Width returns the UID width of kind in bytes.
func (u *UIDs) Width(kind Kind) int { return u.kinds[kind].width }

// AppendID appends id on kind's width.
func (u *UIDs) AppendID(dst []byte, kind Kind, id ID) []byte {
	return AppendID(dst, id, u.kinds[kind].width)
}

// Lookup returns the UID of name without creating it: ErrNoSuchName
// (*NoSuchNameError) when it has none. A cached name costs no allocation
// and no storage read.
func (u *UIDs) Lookup(ctx context.Context, kind Kind, name []byte) (ID, error) {
	if !kind.Valid() {
		return 0, fmt.Errorf("lookup uid: invalid kind %d", kind)
	}
	if id, ok := u.kinds[kind].names.get(name); ok {
		return id, nil
	}
	return u.lookupSlow(ctx, kind, name)
}

// Resolve returns the UID of name, assigning one when the name is new and
// the kind auto-creates; otherwise a new name is ErrNoSuchName.
func (u *UIDs) Resolve(ctx context.Context, kind Kind, name []byte) (ID, error) {
	if !kind.Valid() {
		return 0, fmt.Errorf("resolve uid: invalid kind %d", kind)
	}
	ks := &u.kinds[kind]
	if id, ok := ks.names.get(name); ok {
		return id, nil
	}
	bctx, cancel := u.storeContext(ctx)
	defer cancel()
	id, err := u.lookupSlow(bctx, kind, name)
	if err == nil || !ks.autoCreate || !errors.Is(err, ErrNoSuchName) {
		return id, u.storeTimedOut(ctx, bctx, err)
	}
	id, err = u.assign(bctx, kind, name)
	return id, u.storeTimedOut(ctx, bctx, err)
}

// storeContext bounds a trip to the UID table by Options.StoreTimeout.
func (u *UIDs) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if u.opts.StoreTimeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, u.opts.StoreTimeout)
}

// storeTimedOut marks err retryable when the bound of storeContext ended
// bctx while the caller's ctx still runs: the store did not answer in
// time, which is the server's condition, not the name's.
func (u *UIDs) storeTimedOut(ctx, bctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || bctx.Err() == nil {
		return err
	}
	return storage.MarkRetryable(fmt.Errorf("uid table did not answer within %v: %w", u.opts.StoreTimeout, err))
}

// Assign returns the UID of name, assigning one if it has none, whatever
// the auto-create settings (OpenTSDB's `uid assign`).
func (u *UIDs) Assign(ctx context.Context, kind Kind, name []byte) (ID, error) {
	id, err := u.Lookup(ctx, kind, name)
	if err == nil || !errors.Is(err, ErrNoSuchName) {
		return id, err
	}
	return u.assign(ctx, kind, name)
}

// Name returns the name of id: ErrNoSuchID (*NoSuchIDError) when it has
// none. A cached ID costs no allocation.
func (u *UIDs) Name(ctx context.Context, kind Kind, id ID) (string, error) {
	if !kind.Valid() {
		return "", fmt.Errorf("uid name: invalid kind %d", kind)
	}
	ks := &u.kinds[kind]
	if name, ok := ks.ids.get(id); ok {
		return name, nil
	}
	return u.nameSlow(ctx, kind, id)
}

func (u *UIDs) lookupSlow(ctx context.Context, kind Kind, name []byte) (ID, error) {
	if len(name) == 0 {
		return 0, &NameError{Kind: kind, Empty: true}
	}
	if storedRules.Validate(kind, name) != nil {
		// The table holds only names storedRules accept, so this one has
		// no UID; its row could be the counter row ("\x00").
		return 0, &NoSuchNameError{Kind: kind, Name: string(name)}
	}
	row, err := EncodeName(u.opts.Format, nil, name)
	if err == nil {
		err = checkNameLen(kind, row)
	}
	if err != nil {
		return 0, fmt.Errorf("lookup uid for %s: %w", kind, err)
	}
	id, found, err := u.readForward(ctx, kind, row)
	if err != nil {
		return 0, fmt.Errorf("lookup uid for %s %q: %w", kind, name, err)
	}
	if !found {
		return 0, &NoSuchNameError{Kind: kind, Name: string(name)}
	}
	u.cacheBoth(kind, string(name), id)
	return id, nil
}

func (u *UIDs) nameSlow(ctx context.Context, kind Kind, id ID) (string, error) {
	ks := &u.kinds[kind]
	row := AppendID(nil, id, ks.width)
	if id == 0 || id > ks.maxID {
		return "", &NoSuchIDError{Kind: kind, ID: row}
	}
	cells, err := u.get(ctx, row, reverseRead[kind])
	if errors.Is(err, storage.ErrNotFound) {
		return "", &NoSuchIDError{Kind: kind, ID: row}
	}
	if err != nil {
		return "", fmt.Errorf("uid name for %s %x: %w", kind, row, err)
	}
	name := string(DecodeName(u.opts.Format, nil, cells[0].Value))
	u.cacheBoth(kind, name, id)
	return name, nil
}

// readForward reads the forward map of a stored name.
func (u *UIDs) readForward(ctx context.Context, kind Kind, row []byte) (ID, bool, error) {
	cells, err := u.get(ctx, row, forwardRead[kind])
	if errors.Is(err, storage.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	id, err := parseExactID(cells[0].Value, u.kinds[kind].width)
	if err != nil {
		return 0, false, &storage.CorruptionError{Table: u.tbl.Spec().Name, Row: row, Qualifier: kindQuals[kind], Err: err}
	}
	return id, true, nil
}

// get is Table.Get with retries on retryable errors.
func (u *UIDs) get(ctx context.Context, row []byte, ro *storage.ReadOptions) ([]storage.Cell, error) {
	var cells []storage.Cell
	err := u.withRetry(ctx, func() (err error) {
		cells, err = u.tbl.Get(ctx, row, ro)
		return err
	})
	if err == nil && len(cells) == 0 {
		err = storage.ErrNotFound
	}
	return cells, err
}

// withRetry runs fn until it succeeds, fails for good, or MaxAttempts
// retryable failures have happened, pausing with doubling backoff. A
// read-only store (a full disk) is not retried: it lasts far longer than
// the backoff, and the writer's client retries the point later.
func (u *UIDs) withRetry(ctx context.Context, fn func() error) error {
	backoff := u.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !storage.IsRetryable(err) || errors.Is(err, storage.ErrReadOnly) || attempt >= u.opts.MaxAttempts {
			return err
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			return err
		}
		backoff *= 2
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (u *UIDs) cacheBoth(kind Kind, name string, id ID) {
	ks := &u.kinds[kind]
	ks.names.put(name, id)
	ks.ids.put(id, name)
}

func (u *UIDs) uncache(kind Kind, name string, id ID) {
	ks := &u.kinds[kind]
	ks.names.remove(name)
	ks.ids.remove(id)
}

// DropCaches empties every cache (OpenTSDB's /api/dropcaches); counters are
// kept.
func (u *UIDs) DropCaches() {
	for k := range u.kinds {
		u.kinds[k].names.reset()
		u.kinds[k].ids.reset()
	}
}

// KindStats are the counters of one kind.
type KindStats struct {
	// Names and IDs are the name→UID and UID→name caches.
	Names, IDs CacheStats
	// Assigned counts UIDs this process assigned.
	Assigned uint64
	// RacesLost counts assignments another writer won (our ID leaked).
	RacesLost uint64
	// ReverseConflicts counts reverse-map CAS failures (an fsck hint).
	ReverseConflicts uint64
}

// Stats returns the counters of every kind, indexed by Kind.
func (u *UIDs) Stats() [NumKinds]KindStats {
	var st [NumKinds]KindStats
	for k := range u.kinds {
		ks := &u.kinds[k]
		st[k] = KindStats{
			Names: ks.names.stats(), IDs: ks.ids.stats(),
			Assigned: ks.assigned.Load(), RacesLost: ks.racesLost.Load(),
			ReverseConflicts: ks.reverseConflicts.Load(),
		}
	}
	return st
}
