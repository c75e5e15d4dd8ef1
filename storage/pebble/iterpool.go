package pebble

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// writeGen counts the store's writes twice: begun before a write commits
// to pebble and done after, both before the write is acknowledged. A reused
// iterator is only correct when no commit happened since it was created;
// the doc.go section "Iterator reuse" argues why these two counters tell.
type writeGen struct {
	begun atomic.Uint64
	_     [56]byte // begun and done on their own cache lines
	done  atomic.Uint64
	_     [56]byte
}

// beginWrite is called before a write commits to pebble.
func (d *DB) beginWrite() { d.gen.begun.Add(1) }

// endWrite is called after a write's commit returned (successfully or
// not) and before it is acknowledged. Every pooled iterator is stale now,
// so they are closed at once: they pin memtables and sstables that flushes
// and compactions would otherwise free. Writes that follow find the pool
// empty and pay one atomic load.
func (d *DB) endWrite() {
	d.gen.done.Add(1)
	if d.iters.n.Load() > 0 {
		d.iters.dropStale(d.gen.begun.Load())
	}
}

// commit commits b between beginWrite and endWrite, unless the store
// refuses writes (space.go) or b writes into a damaged sstable's range
// (damage.go), and fails it if pebble reported a full disk.
func (d *DB) commit(b *pebble.Batch, wo *pebble.WriteOptions) error {
	if err := d.admit(false); err != nil {
		return err
	}
	if err := d.damage.checkBatch(b); err != nil {
		return err
	}
	d.beginWrite()
	err := b.Commit(wo)
	d.endWrite()
	return d.committed(err)
}

// commitDeletes is commit for the collector's batches, which only delete
// and so go through while the disk is merely low.
func (d *DB) commitDeletes(b *pebble.Batch, wo *pebble.WriteOptions) error {
	if err := d.admit(true); err != nil {
		return err
	}
	if err := d.damage.checkBatch(b); err != nil {
		return err
	}
	d.beginWrite()
	err := b.Commit(wo)
	d.endWrite()
	return d.committed(err)
}

// pooledIter is an open pebble iterator and the write generation its
// snapshot reflects.
type pooledIter struct {
	it  *pebble.Iterator
	gen uint64
	// reusable says the iterator may go back to the pool: no write was in
	// flight when it was created, so its snapshot is the state after
	// exactly gen writes.
	reusable bool
}

// iterPool keeps a few open pebble iterators for Get and Scan to reuse:
// repositioning one with SetBounds costs far less than NewIter, which
// builds a merging iterator over every memtable and level. It is a bounded
// stack, not a sync.Pool, because an iterator dropped without Close pins
// its memtables and sstables and makes pebble's Close fail.
type iterPool struct {
	mu     sync.Mutex
	free   []pooledIter
	size   int
	closed bool
	n      atomic.Int32 // len(free), for endWrite's lock-free check
}

// defaultIterPoolSize bounds the pool: one iterator per concurrent reader
// is the most that can be reused, and readers rarely outnumber 2×GOMAXPROCS.
func defaultIterPoolSize() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// acquire returns an iterator over [lo, hi): a pooled one if no write
// committed since it was created, else a new one.
func (d *DB) acquire(ctx context.Context, lo, hi []byte, io *pebble.IterOptions) (pooledIter, error) {
	if p, ok := d.iters.pop(); ok {
		if p.gen == d.gen.begun.Load() {
			// Bounds are the only options the store sets, so SetBounds
			// leaves nothing of the previous read behind; the scanner's
			// own filters are reset per call.
			p.it.SetBounds(lo, hi)
			p.it.SetContext(ctx)
			return p, nil
		}
		// Stale: a write committed since. Close the other stale ones too.
		_ = p.it.Close()
		d.iters.dropStale(d.gen.begun.Load())
	}
	// done before begun: equal values mean no write was in flight at the
	// second load, so the iterator created after it holds every write
	// counted and none other until begun moves.
	done := d.gen.done.Load()
	begun := d.gen.begun.Load()
	*io = pebble.IterOptions{LowerBound: lo, UpperBound: hi}
	it, err := d.pdb.NewIterWithContext(ctx, io)
	if err != nil {
		return pooledIter{}, err
	}
	return pooledIter{it: it, gen: begun, reusable: done == begun}, nil
}

// release returns p to the pool when it can be reused and closes it
// otherwise; it returns the iterator's close error.
func (d *DB) release(p pooledIter) error {
	if !p.reusable || p.gen != d.gen.begun.Load() || p.it.Error() != nil || !d.iters.push(p) {
		return p.it.Close()
	}
	// A write that began after the check above may have found the pool
	// empty in endWrite; n is stored before begun is loaded again here and
	// endWrite loads n after adding to begun, so one of the two sees the
	// other and the stale iterator is closed.
	if p.gen != d.gen.begun.Load() {
		d.iters.dropStale(d.gen.begun.Load())
	}
	return nil
}

func (p *iterPool) pop() (pooledIter, bool) {
	if p.n.Load() == 0 {
		return pooledIter{}, false
	}
	p.mu.Lock()
	k := len(p.free)
	if k == 0 {
		p.mu.Unlock()
		return pooledIter{}, false
	}
	it := p.free[k-1]
	p.free[k-1] = pooledIter{}
	p.free = p.free[:k-1]
	p.n.Store(int32(k - 1))
	p.mu.Unlock()
	return it, true
}

// push adds it to the pool; false means the pool is full or closed and the
// caller must close it.
func (p *iterPool) push(it pooledIter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.free) >= p.size {
		return false
	}
	p.free = append(p.free, it)
	p.n.Store(int32(len(p.free)))
	return true
}

// noGen matches no iterator's generation: dropStale(noGen) empties the pool.
const noGen = ^uint64(0)

// dropStale closes the pooled iterators of generations other than gen.
func (p *iterPool) dropStale(gen uint64) {
	var stale [16]*pebble.Iterator
	list := stale[:0]
	p.mu.Lock()
	keep := p.free[:0]
	for _, it := range p.free {
		if it.gen == gen {
			keep = append(keep, it)
		} else {
			list = append(list, it.it)
		}
	}
	clear(p.free[len(keep):])
	p.free = keep
	p.n.Store(int32(len(keep)))
	p.mu.Unlock()
	for _, it := range list {
		_ = it.Close()
	}
}

// close closes every pooled iterator and refuses new ones, so none is
// open when pebble closes. The caller holds opMu exclusively.
func (p *iterPool) close() error {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.n.Store(0)
	p.mu.Unlock()
	var err error
	for _, it := range free {
		if cerr := it.it.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
