package pebble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// gcChunk is how many keys one collector step reads while it holds the
// DB's in-flight marker, so Close and DropTable never wait long for it.
const gcChunk = 4096

// startGC starts the background collector unless it is disabled.
func (d *DB) startGC() {
	if d.opts.GCInterval < 0 {
		return
	}
	d.gcStop = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	d.gcWG.Add(2)
	go func() {
		defer d.gcWG.Done()
		<-d.gcStop
		cancel()
	}()
	go d.gcLoop(ctx)
}

// stopGC stops the collector and waits for it.
func (d *DB) stopGC() {
	if d.gcStop != nil {
		close(d.gcStop)
		d.gcWG.Wait()
	}
}

func (d *DB) gcLoop(ctx context.Context) {
	defer d.gcWG.Done()
	tick := time.NewTicker(d.opts.GCInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := d.collectGarbage(ctx)
		var de *DamageError
		switch {
		case err == nil || errors.Is(err, storage.ErrClosed) || errors.Is(err, storage.ErrReadOnly) ||
			errors.Is(err, errReopening) || ctx.Err() != nil:
		case errors.As(err, &de):
			// Every pass meets it again until a repair: once a window.
			d.opts.RateLog.Warn("storage.gc_damaged", "", "storage gc stopped at a damaged sstable", "dir", d.dir, "err", err)
		default:
			d.opts.Logger.Error("storage gc failed", "dir", d.dir, "err", err)
		}
	}
}

// collectGarbage deletes every version that a family's TTL or MaxVersions
// hides, so compactions can reclaim its space.
func (d *DB) collectGarbage(ctx context.Context) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.cat.Lock()
	tables := make([]*table, 0, len(d.cat.tables))
	for _, t := range d.cat.tables {
		tables = append(tables, t)
	}
	d.cat.Unlock()
	d.leave()
	for _, t := range tables {
		if err := t.collectGarbage(ctx); err != nil {
			return fmt.Errorf("gc table %q: %w", t.name, d.damage.readError(err))
		}
	}
	return nil
}

// gcPass is the state of one collector pass over a table.
type gcPass struct {
	t        *table
	st       *tableState
	now      int64
	resume   []byte // next key to read; nil when the pass is done
	hi       []byte
	col      []byte
	fam      int
	versions int
	surplus  [][]byte // row prefixes with versions beyond MaxVersions
}

func (t *table) collectGarbage(ctx context.Context) error {
	st := t.state.Load()
	if !st.hasLimits() {
		return nil
	}
	p := &gcPass{t: t, st: st, now: t.db.nowMicros(), fam: -1}
	p.resume, p.hi = t.rowBounds(nil, nil, nil, nil)
	for p.resume != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// hasLimits reports whether any family has a TTL or a version limit.
func (s *tableState) hasLimits() bool {
	for _, f := range s.fams {
		if f.maxVersions > 0 || f.ttlMicros > 0 {
			return true
		}
	}
	return false
}

// step reads up to gcChunk keys, deletes the expired ones and trims the
// rows holding surplus versions.
func (p *gcPass) step(ctx context.Context) error {
	d := p.t.db
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	it, err := d.pdb.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: p.resume, UpperBound: p.hi})
	if err != nil {
		return err
	}
	b := d.pdb.NewBatch()
	defer b.Close()
	n := 0
	valid := it.First()
	for ; valid && n < gcChunk; valid = it.Next() {
		if err := p.visit(b, it.Key()); err != nil {
			it.Close()
			return err
		}
		n++
	}
	p.resume = nil
	if valid {
		p.resume = bytes.Clone(it.Key())
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := d.commitDeletes(b, pebble.NoSync); err != nil {
		return err
	}
	return p.trimSurplus(ctx)
}

// visit classifies one key: expired versions are deleted at once (expiry is
// permanent, so no lock is needed); surplus versions mark their row for a
// locked recount, because a delete could have made them visible again.
func (p *gcPass) visit(b *pebble.Batch, key []byte) error {
	colLen := len(key) - tsLen
	if colLen <= 0 || !bytes.Equal(key[:colLen], p.col) {
		if err := p.enterColumn(key); err != nil {
			return err
		}
	}
	p.versions++
	if p.fam < 0 {
		return nil
	}
	f := p.st.fams[p.fam]
	if expired(f, keyTimestamp(key), p.now) {
		return b.Delete(key, nil)
	}
	if f.maxVersions > 0 && p.versions > f.maxVersions {
		rp := key[:split(key)]
		if n := len(p.surplus); n == 0 || !bytes.Equal(p.surplus[n-1], rp) {
			p.surplus = append(p.surplus, bytes.Clone(rp))
		}
	}
	return nil
}

func (p *gcPass) enterColumn(key []byte) error {
	k, _, err := ParseCellKey(nil, key)
	if err != nil {
		return &storage.CorruptionError{Table: p.t.name, Err: fmt.Errorf("key %x: %w", key, err)}
	}
	p.col = append(p.col[:0], key[:len(key)-tsLen]...)
	p.versions = 0
	p.fam = p.st.family(k.Family)
	return nil
}

// trimSurplus deletes surplus versions of the marked rows, each under its
// exclusive row lock so no concurrent write is lost.
func (p *gcPass) trimSurplus(ctx context.Context) error {
	for _, rp := range p.surplus {
		if err := p.trimRow(ctx, rp); err != nil {
			return err
		}
	}
	p.surplus = p.surplus[:0]
	return nil
}

func (p *gcPass) trimRow(ctx context.Context, rowPrefix []byte) error {
	row, _, _, err := parseField(nil, rowPrefix[max(rowStart(rowPrefix), 0):])
	if err != nil {
		return &storage.CorruptionError{Table: p.t.name, Err: err}
	}
	d := p.t.db
	l := d.rows.lock(p.t.id, row)
	l.Lock()
	defer l.Unlock()
	it, err := d.pdb.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: rowPrefix, UpperBound: prefixSuccessor(nil, rowPrefix),
	})
	if err != nil {
		return err
	}
	b := d.pdb.NewBatch()
	defer b.Close()
	q := gcPass{t: p.t, st: p.st, now: p.now, fam: -1}
	for it.First(); it.Valid(); it.Next() {
		if err := q.visitLocked(b, it.Key()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	return d.commitDeletes(b, pebble.NoSync)
}

// visitLocked deletes a version beyond its family's MaxVersions.
func (p *gcPass) visitLocked(b *pebble.Batch, key []byte) error {
	colLen := len(key) - tsLen
	if colLen <= 0 || !bytes.Equal(key[:colLen], p.col) {
		if err := p.enterColumn(key); err != nil {
			return err
		}
	}
	p.versions++
	if p.fam >= 0 && p.st.fams[p.fam].maxVersions > 0 && p.versions > p.st.fams[p.fam].maxVersions {
		return b.Delete(key, nil)
	}
	return nil
}
