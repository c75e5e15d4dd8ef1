package uid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tsd-db/tsd/storage"
)

// Bounds of ResolveBatch.
const (
	// batchInFlight bounds the storage calls one batch has in flight: enough
	// for an engine that groups synced writes (pebble) or pipelines RPCs
	// (Bigtable) to amortise them, few enough not to crowd out other
	// writers.
	batchInFlight = 64
	// maxBatchRound bounds the names one MAXID increment reserves, so one
	// round's reverse maps stay a modest multi-row write.
	maxBatchRound = 4096
)

// CheckName returns the error Resolve would return for a name the UID table
// can never hold (a *NameError, ErrNotLatin1, or ErrInvalidName for a name
// too long to be a row key), or nil for a name that can be assigned. It
// does not touch the store.
func (u *UIDs) CheckName(kind Kind, name []byte) error {
	if !kind.Valid() {
		return fmt.Errorf("check uid name: invalid kind %d", kind)
	}
	if err := storedRules.Validate(kind, name); err != nil {
		return err
	}
	row, err := EncodeName(u.opts.Format, nil, name)
	if err == nil {
		err = checkNameLen(kind, row)
	}
	if err != nil {
		return fmt.Errorf("lookup uid for %s: %w", kind, err)
	}
	return nil
}

// Cached returns the UID of name if this process's cache holds it. It
// never touches the store and does not allocate.
func (u *UIDs) Cached(kind Kind, name []byte) (ID, bool) {
	if !kind.Valid() {
		return 0, false
	}
	return u.kinds[kind].names.get(name)
}

// Find returns the UID of name and found=true, or found=false when the
// name has none yet; it never assigns. An invalid name is the error Resolve
// would return (CheckName), and a trip to the store is bounded by
// Options.StoreTimeout and its expiry is retryable, as in Resolve. A
// cached name costs no allocation.
func (u *UIDs) Find(ctx context.Context, kind Kind, name []byte) (id ID, found bool, err error) {
	if !kind.Valid() {
		return 0, false, fmt.Errorf("find uid: invalid kind %d", kind)
	}
	if id, ok := u.kinds[kind].names.get(name); ok {
		return id, true, nil
	}
	if err := u.CheckName(kind, name); err != nil {
		return 0, false, err
	}
	bctx, cancel := u.storeContext(ctx)
	defer cancel()
	id, err = u.lookupSlow(bctx, kind, name)
	if errors.Is(err, ErrNoSuchName) {
		return 0, false, nil
	}
	return id, err == nil, u.storeTimedOut(ctx, bctx, err)
}

// AutoCreate reports whether Resolve assigns UIDs to new names of kind
// (tsd.core.auto_create_*).
func (u *UIDs) AutoCreate(kind Kind) bool {
	return kind.Valid() && u.kinds[kind].autoCreate
}

// ResolveBatch sets ids[i] to the UID of names[i] for names of one kind, as
// Resolve would one by one, but with the store trips of the whole batch
// shared: uncached names are looked up concurrently, and the new ones (when
// the kind auto-creates) are assigned together: one MAXID increment
// reserves an ID for each, their reverse maps are written in one multi-row
// write (the IDs are ours alone), then the forward maps are
// checked-and-put concurrently, at most 64 in flight. A name whose forward
// map another writer publishes first takes the winner's UID; the reserved
// ID stays unused, as OpenTSDB leaves it. The batch is bounded by
// Options.StoreTimeout as one Resolve is. On error some names may have
// been assigned (and are cached); ids is meaningful only on success.
// len(ids) must be at least len(names).
func (u *UIDs) ResolveBatch(ctx context.Context, kind Kind, names [][]byte, ids []ID) error {
	return u.batch(ctx, kind, names, ids, false, false)
}

// AssignBatch is ResolveBatch whatever the auto-create settings (a batched
// Assign).
func (u *UIDs) AssignBatch(ctx context.Context, kind Kind, names [][]byte, ids []ID) error {
	return u.batch(ctx, kind, names, ids, true, false)
}

// ResolveNewBatch is ResolveBatch for names the caller has just found
// absent (Find): uncached names are not read again before their
// assignment. One that another writer assigned meanwhile still gets that
// writer's UID (its forward check-and-put loses), at the cost of an unused
// ID.
func (u *UIDs) ResolveNewBatch(ctx context.Context, kind Kind, names [][]byte, ids []ID) error {
	return u.batch(ctx, kind, names, ids, false, true)
}

func (u *UIDs) batch(ctx context.Context, kind Kind, names [][]byte, ids []ID, create, knownNew bool) error {
	if !kind.Valid() {
		return fmt.Errorf("resolve uid batch: invalid kind %d", kind)
	}
	if len(ids) < len(names) {
		return fmt.Errorf("resolve uid batch: %d ids for %d names", len(ids), len(names))
	}
	ks := &u.kinds[kind]
	var m missing
	for i, name := range names {
		if id, ok := ks.names.get(name); ok {
			ids[i] = id
			continue
		}
		m.add(name, i)
	}
	if len(m.order) == 0 {
		return nil
	}
	bctx, cancel := u.storeContext(ctx)
	defer cancel()
	err := u.resolveMissing(bctx, kind, &m, ids, create || ks.autoCreate, knownNew)
	return u.storeTimedOut(ctx, bctx, err)
}

// missing are the uncached names of a batch: each distinct name in order
// of first appearance, with its indexes in the batch.
type missing struct {
	order []string
	at    map[string][]int
}

func (m *missing) add(name []byte, i int) {
	if m.at == nil {
		m.at = make(map[string][]int)
	}
	at, ok := m.at[string(name)]
	if !ok {
		m.order = append(m.order, string(name))
	}
	m.at[string(name)] = append(at, i)
}

// batchName is one distinct uncached name of a batch.
type batchName struct {
	name string
	row  []byte // stored form, the forward map's row
	id   ID
	err  error
	// stale are IDs of earlier rounds whose forward put failed
	// retryably: each has our reverse map, and may have our forward map.
	stale []ID
}

// resolveMissing looks the uncached names up, assigns the absent ones when
// create is set, and writes every name's UID at its indexes in ids.
func (u *UIDs) resolveMissing(ctx context.Context, kind Kind, miss *missing, ids []ID, create, knownNew bool) error {
	todo := make([]batchName, 0, len(miss.order))
	for _, name := range miss.order {
		if name != "" && !create && storedRules.ValidateString(kind, name) != nil {
			// As lookupSlow: the table holds no such name.
			return &NoSuchNameError{Kind: kind, Name: name}
		}
		if err := u.CheckName(kind, []byte(name)); err != nil {
			return err
		}
		row, _ := EncodeName(u.opts.Format, nil, []byte(name)) // CheckName encoded it
		todo = append(todo, batchName{name: name, row: row})
	}
	if !knownNew {
		if err := u.lookupBatch(ctx, kind, todo); err != nil {
			return err
		}
	}
	absent := todo[:0:0]
	for _, b := range todo {
		if b.id == 0 {
			absent = append(absent, b)
		}
	}
	if len(absent) > 0 {
		if !create {
			return &NoSuchNameError{Kind: kind, Name: absent[0].name}
		}
		if err := u.assignBatch(ctx, kind, absent); err != nil {
			return err
		}
		done := make(map[string]ID, len(absent))
		for _, b := range absent {
			done[b.name] = b.id
		}
		for i := range todo {
			if todo[i].id == 0 {
				todo[i].id = done[todo[i].name]
			}
		}
	}
	for _, b := range todo {
		for _, i := range miss.at[b.name] {
			ids[i] = b.id
		}
	}
	return nil
}

// lookupBatch reads the forward maps of names concurrently; found names get
// their id (and are cached), absent ones keep 0.
func (u *UIDs) lookupBatch(ctx context.Context, kind Kind, names []batchName) error {
	parallel(len(names), func(i int) {
		b := &names[i]
		id, found, err := u.readForward(ctx, kind, b.row)
		switch {
		case err != nil:
			b.err = fmt.Errorf("lookup uid for %s %q: %w", kind, b.name, err)
		case found:
			b.id = id
			u.cacheBoth(kind, b.name, id)
		}
	})
	return firstErr(names)
}

// parallel runs fn(0..n-1) with at most batchInFlight calls at once and
// returns when all have.
func parallel(n int, fn func(i int)) {
	workers := min(n, batchInFlight)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func firstErr(names []batchName) error {
	for i := range names {
		if names[i].err != nil {
			return names[i].err
		}
	}
	return nil
}

// assignBatch gives every name of names a UID. Names another caller in
// this process is assigning right now are waited for rather than assigned
// twice; the rest are led by this call.
func (u *UIDs) assignBatch(ctx context.Context, kind Kind, names []batchName) error {
	g := &u.kinds[kind].flights
	var lead []batchName
	var leadFlights, follow []*flight
	var followAt []int
	for i := range names {
		f, leader := g.join([]byte(names[i].name))
		if !leader {
			follow, followAt = append(follow, f), append(followAt, i)
			continue
		}
		if id, ok := u.kinds[kind].names.peek(names[i].name); ok {
			f.id = id
			names[i].id = id
			g.finish(names[i].name, f)
			continue
		}
		lead, leadFlights = append(lead, names[i]), append(leadFlights, f)
	}
	err := u.leadBatch(ctx, kind, lead)
	// Leaders finish before following anyone, so two batches that lead
	// each other's names never wait on each other.
	for i, f := range leadFlights {
		f.id, f.err = lead[i].id, lead[i].err
		if f.err == nil && f.id == 0 {
			f.err = err
			if f.err == nil {
				f.err = fmt.Errorf("assign uid for %s %q: not assigned", kind, lead[i].name)
			}
		}
		g.finish(lead[i].name, f)
	}
	if err != nil {
		return err
	}
	done := make(map[string]ID, len(lead))
	for _, b := range lead {
		done[b.name] = b.id
	}
	for i := range names {
		if id, ok := done[names[i].name]; ok {
			names[i].id = id
		}
	}
	for j, f := range follow {
		id, err := u.follow(ctx, kind, f, names[followAt[j]].name)
		if err != nil {
			return err
		}
		names[followAt[j]].id = id
	}
	return nil
}

// follow waits for another caller's assignment of name; if that caller
// gave up because its own context ended, name is assigned with ours.
func (u *UIDs) follow(ctx context.Context, kind Kind, f *flight, name string) (ID, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if f.err != nil && isContextErr(f.err) && ctx.Err() == nil {
		return u.assign(ctx, kind, []byte(name))
	}
	return f.id, f.err
}

// leadBatch runs the batched protocol for names no one else in this
// process is assigning, in rounds of at most maxBatchRound names. A round
// may leave names for the next (an ID whose reverse map exists, a winner
// that vanished); retryable failures pause with doubling backoff; at most
// Options.MaxAttempts rounds run without progress.
func (u *UIDs) leadBatch(ctx context.Context, kind Kind, names []batchName) error {
	pending := make([]*batchName, 0, len(names))
	for i := range names {
		pending = append(pending, &names[i])
	}
	backoff := u.opts.RetryBackoff
	failures := 0
	var last error
	for len(pending) > 0 {
		round := pending[:min(len(pending), maxBatchRound)]
		again, err := u.assignRound(ctx, kind, round)
		if err != nil && (!storage.IsRetryable(err) || errors.Is(err, storage.ErrReadOnly)) && !errors.Is(err, errRoundAgain) {
			return err // read-only (a full disk) lasts longer than any backoff
		}
		progress := len(again) < len(round)
		pending = append(again, pending[len(round):]...)
		if err == nil || progress {
			failures = 0
			continue
		}
		last = err
		if failures++; failures >= u.opts.MaxAttempts {
			return fmt.Errorf("assign %d uids for %s: gave up after %d attempts: %w", len(pending), kind, failures, last)
		}
		if storage.IsRetryable(err) {
			if err := sleepCtx(ctx, backoff); err != nil {
				return err
			}
			backoff *= 2
		}
	}
	return nil
}

// errRoundAgain says a round left names for the next one.
var errRoundAgain = errors.New("uid: batch round left names unassigned")

// assignRound reserves one ID per name with one increment, writes their
// reverse maps, then publishes their forward maps. It returns the names
// left for another round.
func (u *UIDs) assignRound(ctx context.Context, kind Kind, names []*batchName) (again []*batchName, err error) {
	ks := &u.kinds[kind]
	n := int64(len(names))
	end, err := u.tbl.Increment(ctx, MaxIDRow, FamilyID, kindQuals[kind], n)
	if err != nil {
		return names, fmt.Errorf("assign %d uids for %s: increment max id: %w", n, kind, err)
	}
	if end-n+1 <= 0 {
		return names, fmt.Errorf("assign uids for %s: max id counter returned %d after adding %d; run tsd uid fsck", kind, end, n)
	}
	first, last := ID(end-n+1), min(ID(end), ks.maxID)
	if first > ks.maxID {
		return names, &ExhaustedError{Kind: kind, Width: ks.width}
	}
	// Past the width's last ID the names wait for a round that fails as
	// exhausted, after those that fit are assigned.
	taken, err := u.takenIDs(ctx, kind, first, last)
	if err != nil {
		return names, err
	}
	ready := make([]*batchName, 0, len(names))
	var muts []storage.Mutation
	id := first
	for _, b := range names {
		for taken[id] {
			id++
		}
		if id > last {
			again = append(again, b)
			continue
		}
		b.id = id
		id++
		ready = append(ready, b)
		muts = append(muts, storage.Mutation{Row: AppendID(nil, b.id, ks.width), Cells: []storage.Cell{reverseCell(kind, b.row)}})
	}
	if len(muts) > 0 {
		// Every reverse map is written before any forward map, so a crash
		// anywhere leaves at worst reverse maps of unused IDs.
		if err := u.withRetry(ctx, func() error { return u.tbl.Apply(ctx, muts) }); err != nil {
			for _, b := range ready {
				b.id = 0
			}
			return names, fmt.Errorf("assign %d uids for %s: reverse maps: %w", len(muts), kind, err)
		}
	}
	parallel(len(ready), func(i int) { u.publish(ctx, kind, ready[i]) })
	for _, b := range ready {
		switch {
		case b.err != nil && !storage.IsRetryable(b.err):
			return nil, b.err
		case b.err != nil:
			// Our reverse map stays: if the put landed after all, the next
			// round's check-and-put meets it and takes this ID back.
			err, b.err = b.err, nil
			again = append(again, b)
		case b.id == 0:
			again = append(again, b)
		}
	}
	if err == nil && len(again) > 0 {
		err = errRoundAgain
	}
	return again, err
}

// takenIDs returns the IDs in [first, last] that already name something of
// kind. There should be none (the counter gave them to us alone); one means
// MAXID is behind the table, which OpenTSDB's reverse check-and-put
// detects one ID at a time and this one scan detects for the round.
func (u *UIDs) takenIDs(ctx context.Context, kind Kind, first, last ID) (map[ID]bool, error) {
	w := u.kinds[kind].width
	opts := &storage.ScanOptions{Start: AppendID(nil, first, w), ReadOptions: *reverseRead[kind]}
	if last < MaxIDForWidth(w) {
		opts.Stop = AppendID(nil, last+1, w)
	}
	var taken map[ID]bool
	err := u.withRetry(ctx, func() error {
		taken = nil
		sc := u.tbl.Scan(ctx, opts)
		for sc.Next() {
			id, err := parseExactID(sc.Row().Key, w)
			if err != nil || id < first || id > last {
				continue // a row of another width: not one of ours
			}
			if taken == nil {
				taken = make(map[ID]bool)
			}
			taken[id] = true
		}
		return sc.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("assign uids for %s: check reserved ids: %w", kind, err)
	}
	for id := range taken {
		u.kinds[kind].reverseConflicts.Add(1)
		u.log.Error("uid: a reserved id already has a reverse map; the max id counter is behind the table, run tsd uid fsck",
			"kind", kind.String(), "uid", fmt.Sprintf("%x", AppendID(nil, id, w)))
	}
	return taken, nil
}

// publish check-and-puts b's forward map. On return b.id is its UID (ours
// or the winner's), or 0 when the winner's map vanished and b needs another
// round, or b.err is set.
func (u *UIDs) publish(ctx context.Context, kind Kind, b *batchName) {
	ks := &u.kinds[kind]
	ours := b.id
	uidBytes := AppendID(nil, ours, ks.width)
	// A retried put that landed meets its own map; the read below tells.
	err := u.withRetry(ctx, func() error {
		return u.tbl.CheckAndPut(ctx, b.row, FamilyID, kindQuals[kind], nil, []storage.Cell{forwardCell(kind, uidBytes)})
	})
	if err == nil {
		ks.assigned.Add(1)
		u.cacheBoth(kind, b.name, ours)
		u.dropStale(ctx, kind, b)
		return
	}
	if !errors.Is(err, storage.ErrConflict) {
		if storage.IsRetryable(err) {
			b.stale = append(b.stale, ours)
		}
		b.id, b.err = 0, fmt.Errorf("assign uid for %s %q: forward map: %w", kind, b.name, err)
		return
	}
	winner, found, err := u.readForward(ctx, kind, b.row)
	if err != nil {
		b.id, b.err = 0, fmt.Errorf("assign uid for %s %q: read winning forward map: %w", kind, b.name, err)
		return
	}
	if found && winner == ours {
		ks.assigned.Add(1)
		u.cacheBoth(kind, b.name, ours)
		u.dropStale(ctx, kind, b)
		return
	}
	b.id = 0
	if found && slices.Contains(b.stale, winner) {
		// An earlier round's put landed after all: that ID is ours.
		ks.assigned.Add(1)
	} else {
		ks.racesLost.Add(1)
	}
	u.dropLeakedReverse(ctx, kind, b.name, uidBytes)
	if found {
		b.id = winner
		u.cacheBoth(kind, b.name, winner)
		u.dropStale(ctx, kind, b)
	}
}

// dropStale removes the reverse maps of b's stale IDs other than its UID:
// their forward puts never landed, so no name uses them.
func (u *UIDs) dropStale(ctx context.Context, kind Kind, b *batchName) {
	for _, id := range b.stale {
		if id != b.id {
			u.dropLeakedReverse(ctx, kind, b.name, AppendID(nil, id, u.kinds[kind].width))
		}
	}
	b.stale = nil
}
