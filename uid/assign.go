package uid

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tsd-db/tsd/storage"
)

// flightGroup lets concurrent requests for one name share one assignment,
// as OpenTSDB's pending_assignments do.
type flightGroup struct {
	mu struct {
		sync.Mutex
		m map[string]*flight
	}
}

// flight is one assignment in progress; id and err are set before done is
// closed.
type flight struct {
	done chan struct{}
	id   ID
	err  error
}

// join returns the flight for name and whether the caller leads it.
func (g *flightGroup) join(name []byte) (*flight, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.mu.m[string(name)]; ok {
		return f, false
	}
	if g.mu.m == nil {
		g.mu.m = make(map[string]*flight)
	}
	f := &flight{done: make(chan struct{})}
	g.mu.m[string(name)] = f
	return f, true
}

func (g *flightGroup) finish(name string, f *flight) {
	g.mu.Lock()
	delete(g.mu.m, name)
	g.mu.Unlock()
	close(f.done)
}

// assign gives name a UID, sharing the work with concurrent callers. A
// follower whose leader gave up because the leader's context ended tries
// again with its own.
func (u *UIDs) assign(ctx context.Context, kind Kind, name []byte) (ID, error) {
	g := &u.kinds[kind].flights
	for {
		f, leader := g.join(name)
		if leader {
			key := string(name)
			f.id, f.err = u.assignOnce(ctx, kind, key)
			g.finish(key, f)
			return f.id, f.err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if f.err != nil && isContextErr(f.err) && ctx.Err() == nil {
			continue
		}
		return f.id, f.err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// assignOnce runs the protocol for a name no one in this process is
// assigning: increment MAXID, CAS the reverse map, CAS the forward map.
func (u *UIDs) assignOnce(ctx context.Context, kind Kind, name string) (ID, error) {
	ks := &u.kinds[kind]
	if id, ok := ks.names.peek(name); ok {
		return id, nil // assigned by a flight that just ended
	}
	row, err := u.storedName(kind, name)
	if err != nil {
		return 0, err
	}
	backoff := u.opts.RetryBackoff
	var last error
	for attempt := 1; attempt <= u.opts.MaxAttempts; attempt++ {
		id, done, err := u.tryAssign(ctx, kind, name, row)
		if done || errors.Is(err, storage.ErrReadOnly) {
			return id, err
		}
		last = err
		if storage.IsRetryable(err) && attempt < u.opts.MaxAttempts {
			if err := sleepCtx(ctx, backoff); err != nil {
				return 0, err
			}
			backoff *= 2
		}
	}
	return 0, fmt.Errorf("assign uid for %s %q: gave up after %d attempts: %w", kind, name, u.opts.MaxAttempts, last)
}

// storedName validates a new name and returns its stored form.
func (u *UIDs) storedName(kind Kind, name string) ([]byte, error) {
	if err := storedRules.ValidateString(kind, name); err != nil {
		return nil, err
	}
	row, err := EncodeName(u.opts.Format, nil, []byte(name))
	if err != nil {
		return nil, fmt.Errorf("assign uid for %s: %w", kind, err)
	}
	return row, checkNameLen(kind, row)
}

// checkNameLen refuses names too long to be a row key.
func checkNameLen(kind Kind, stored []byte) error {
	if len(stored) > storage.MaxRowKeySize {
		return fmt.Errorf("%w: %s of %d bytes exceeds %d", ErrInvalidName, kind.what(), len(stored), storage.MaxRowKeySize)
	}
	return nil
}

// tryAssign is one attempt. done=false means start again from the
// increment (after a pause if err is retryable).
func (u *UIDs) tryAssign(ctx context.Context, kind Kind, name string, row []byte) (id ID, done bool, err error) {
	ks := &u.kinds[kind]
	n, err := u.tbl.Increment(ctx, MaxIDRow, FamilyID, kindQuals[kind], 1)
	if err != nil {
		return 0, !storage.IsRetryable(err), fmt.Errorf("assign uid for %s %q: increment max id: %w", kind, name, err)
	}
	if n <= 0 {
		return 0, true, fmt.Errorf("assign uid for %s %q: max id counter returned %d; run tsd uid fsck", kind, name, n)
	}
	if ID(n) > ks.maxID {
		return 0, true, &ExhaustedError{Kind: kind, Width: ks.width}
	}
	id = ID(n)
	uidBytes := AppendID(nil, id, ks.width)
	if done, err := u.casReverse(ctx, kind, name, uidBytes, row); !done || err != nil {
		return 0, done, err
	}
	return u.casForward(ctx, kind, name, id, uidBytes, row)
}

// casReverse writes UID → name if the UID has no name yet. It runs before
// the forward map so a crash never publishes a name whose UID has no name.
func (u *UIDs) casReverse(ctx context.Context, kind Kind, name string, uidBytes, row []byte) (done bool, err error) {
	err = u.tbl.CheckAndPut(ctx, uidBytes, FamilyName, kindQuals[kind], nil,
		[]storage.Cell{reverseCell(kind, row)})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrConflict):
		u.kinds[kind].reverseConflicts.Add(1)
		u.log.Error("uid: failed to CAS reverse mapping; the max id counter is behind the table, run tsd uid fsck",
			"kind", kind.String(), "name", name, "uid", fmt.Sprintf("%x", uidBytes))
		return false, fmt.Errorf("assign uid for %s %q: reverse map %x exists: %w", kind, name, uidBytes, err)
	case storage.IsRetryable(err):
		return false, fmt.Errorf("assign uid for %s %q: reverse map: %w", kind, name, err)
	}
	return true, fmt.Errorf("assign uid for %s %q: reverse map: %w", kind, name, err)
}

// casForward writes name → UID if the name has none. Losing means another
// writer assigned the name first: our ID leaks (MAXID never goes back), its
// reverse map is removed, and the winner's ID is returned.
func (u *UIDs) casForward(ctx context.Context, kind Kind, name string, id ID, uidBytes, row []byte) (ID, bool, error) {
	ks := &u.kinds[kind]
	err := u.tbl.CheckAndPut(ctx, row, FamilyID, kindQuals[kind], nil,
		[]storage.Cell{forwardCell(kind, uidBytes)})
	switch {
	case err == nil:
		ks.assigned.Add(1)
		u.cacheBoth(kind, name, id)
		return id, true, nil
	case storage.IsRetryable(err):
		// The put may have landed; the next attempt's CAS will tell.
		return 0, false, fmt.Errorf("assign uid for %s %q: forward map: %w", kind, name, err)
	case !errors.Is(err, storage.ErrConflict):
		return 0, true, fmt.Errorf("assign uid for %s %q: forward map: %w", kind, name, err)
	}
	ks.racesLost.Add(1)
	u.dropLeakedReverse(ctx, kind, name, uidBytes)
	winner, found, err := u.readForward(ctx, kind, row)
	if err != nil {
		return 0, !storage.IsRetryable(err), fmt.Errorf("assign uid for %s %q: read winning forward map: %w", kind, name, err)
	}
	if !found {
		// The winner's map was deleted meanwhile: start again.
		return 0, false, fmt.Errorf("assign uid for %s %q: winning forward map vanished", kind, name)
	}
	u.cacheBoth(kind, name, winner)
	return winner, true, nil
}

// dropLeakedReverse removes the reverse map of an ID that lost the race.
// No one else can own that ID (the counter gave it to us alone), so the
// delete is safe; if it fails, fsck reports the orphan later.
func (u *UIDs) dropLeakedReverse(ctx context.Context, kind Kind, name string, uidBytes []byte) {
	err := u.tbl.Delete(ctx, uidBytes, storage.Deletion{Kind: storage.DeleteColumn, Family: FamilyName, Qualifier: kindQuals[kind]})
	if err != nil {
		u.log.Warn("uid: could not remove the reverse map of a leaked id", "kind", kind.String(), "name", name,
			"uid", fmt.Sprintf("%x", uidBytes), "err", err)
	}
}
