package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// rmw is the state of one read-modify-write call: its row lock is held
// exclusively from the read to the synced commit, so the value it read is
// still the newest when its write lands.
type rmw struct {
	t   *table
	st  *tableState
	fam int
	row []byte
	kb  *keyBuf
	now int64
}

// beginRMW validates the column, marks the call in flight and locks the row.
// The returned release undoes all of it.
func (t *table) beginRMW(ctx context.Context, op string, row []byte, family string) (*rmw, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	st, err := t.beginWrite()
	if err != nil {
		return nil, nil, err
	}
	if err := validateColumn(st, row, family); err != nil {
		t.db.leave()
		return nil, nil, fmt.Errorf("%s in table %q row %q: %w", op, t.name, row, err)
	}
	l := t.db.rows.lock(t.id, row)
	l.Lock()
	r := &rmw{t: t, st: st, fam: st.familyIndex(family), row: row, kb: getKeyBuf(), now: t.db.nowMicros()}
	release := func() {
		putKeyBuf(r.kb)
		l.Unlock()
		t.db.leave()
	}
	return r, release, nil
}

func validateColumn(st *tableState, row []byte, family string) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	return storage.ValidateFamily(st.spec, family)
}

// newest reads the newest live version of a column; found is false when the
// column is absent or its newest version has expired. value is a copy.
func (r *rmw) newest(qualifier []byte) (value []byte, ts int64, found bool, err error) {
	r.kb.a = appendRowPrefix(r.kb.a[:0], r.t.id, r.row)
	r.kb.a = appendColumnPrefix(r.kb.a, r.st.fams[r.fam].name, qualifier)
	r.kb.b = prefixSuccessor(r.kb.b, r.kb.a)
	it, err := r.t.db.pdb.NewIter(&pebble.IterOptions{LowerBound: r.kb.a, UpperBound: r.kb.b})
	if err != nil {
		return nil, 0, false, err
	}
	if it.SeekPrefixGE(r.kb.a) && bytes.HasPrefix(it.Key(), r.kb.a) {
		ts = keyTimestamp(it.Key())
		if !expired(r.st.fams[r.fam], ts, r.now) {
			v, verr := it.ValueAndErr()
			value, found, err = bytes.Clone(v), true, verr
			if value == nil {
				value = []byte{}
			}
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return value, ts, found, r.t.db.damage.readError(err)
}

// expired reports whether a version with timestamp ts is past its family's
// TTL at now.
func expired(f famInfo, ts, now int64) bool {
	return f.ttlMicros > 0 && ts <= now-f.ttlMicros
}

// write commits one cell version of the column in kb.a's row.
func (r *rmw) write(qualifier []byte, ts int64, value []byte) error {
	r.kb.a = appendRowPrefix(r.kb.a[:0], r.t.id, r.row)
	r.kb.a = appendColumnPrefix(r.kb.a, r.st.fams[r.fam].name, qualifier)
	r.kb.a = appendTimestamp(r.kb.a, ts)
	d := r.t.db
	b := d.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(r.kb.a, value, nil)
	return d.commit(b, d.wo)
}

// Increment adds delta to an 8-byte big-endian counter under the row lock
// and writes the sum as a new version at max(now, the old version's time),
// so it is always the newest.
func (t *table) Increment(ctx context.Context, row []byte, family string, qualifier []byte, delta int64) (int64, error) {
	r, release, err := t.beginRMW(ctx, "increment", row, family)
	if err != nil {
		return 0, err
	}
	defer release()
	old, ts, found, err := r.newest(qualifier)
	if err != nil {
		return 0, fmt.Errorf("increment in table %q row %q: %w", t.name, row, err)
	}
	var v int64
	if found {
		if len(old) != 8 {
			return 0, fmt.Errorf("increment in table %q row %q qualifier %q: %w", t.name, row, qualifier,
				storage.Invalidf("counter cell holds %d bytes, want 8", len(old)))
		}
		v = int64(binary.BigEndian.Uint64(old))
	}
	v += delta
	if err := r.write(qualifier, max(r.now, ts), binary.BigEndian.AppendUint64(nil, uint64(v))); err != nil {
		return 0, fmt.Errorf("increment in table %q row %q: %w", t.name, row, err)
	}
	return v, nil
}

// Append appends value to the newest version of the column under the row
// lock and returns the result, written like Increment's.
func (t *table) Append(ctx context.Context, row []byte, family string, qualifier []byte, value []byte) ([]byte, error) {
	r, release, err := t.beginRMW(ctx, "append", row, family)
	if err != nil {
		return nil, err
	}
	defer release()
	old, ts, _, err := r.newest(qualifier)
	if err != nil {
		return nil, fmt.Errorf("append in table %q row %q: %w", t.name, row, err)
	}
	nv := append(old, value...)
	if nv == nil {
		nv = []byte{}
	}
	if err := r.write(qualifier, max(r.now, ts), nv); err != nil {
		return nil, fmt.Errorf("append in table %q row %q: %w", t.name, row, err)
	}
	return nv, nil
}

// CheckAndPut writes cells if the newest version of the column equals
// expected (nil: absent), holding the row lock from the read to the commit.
func (t *table) CheckAndPut(ctx context.Context, row []byte, family string, qualifier []byte, expected []byte, cells []storage.Cell) error {
	r, release, err := t.beginRMW(ctx, "check-and-put", row, family)
	if err != nil {
		return err
	}
	defer release()
	if err := storage.ValidateCells(r.st.spec, cells); err != nil {
		return fmt.Errorf("check-and-put in table %q row %q: %w", t.name, row, err)
	}
	cur, _, found, err := r.newest(qualifier)
	if err != nil {
		return fmt.Errorf("check-and-put in table %q row %q: %w", t.name, row, err)
	}
	if found != (expected != nil) || (found && !bytes.Equal(cur, expected)) {
		return fmt.Errorf("check-and-put in table %q row %q qualifier %q: %w", t.name, row, qualifier, storage.ErrConflict)
	}
	b := t.db.pdb.NewBatch()
	defer b.Close()
	t.addPuts(b, r.kb, row, cells, r.now)
	if err := t.db.commit(b, t.db.wo); err != nil {
		return fmt.Errorf("check-and-put in table %q row %q: %w", t.name, row, err)
	}
	return nil
}
