package uid

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var batchCrashIters = flag.Int("uid.crash.iters", 3, "crash points per batch in TestResolveBatchCrash (20 in the long run)")

// crashTable is a real table on a crashable in-memory filesystem that
// takes crash clones of the filesystem (a power cut: only synced data, or
// part of the rest, survives) at chosen points of a batch: before and after
// the reverse maps' write, and before chosen forward check-and-puts, while
// the other check-and-puts of the batch are in flight.
type crashTable struct {
	storage.Table
	fs  *vfs.MemFS
	at  map[int32]bool // check-and-put numbers to clone before
	cas atomic.Int32
	mu  struct {
		sync.Mutex
		rng    *rand.Rand
		clones []crashClone
	}
}

type crashClone struct {
	fs    *vfs.MemFS
	where string
}

func (c *crashTable) snap(where string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: c.mu.rng.IntN(101), RNG: c.mu.rng}
	c.mu.clones = append(c.mu.clones, crashClone{c.fs.CrashClone(cfg), fmt.Sprintf("%s (unsynced kept %d%%)", where, cfg.UnsyncedDataPercent)})
}

func (c *crashTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	c.snap("before the reverse maps")
	err := c.Table.Apply(ctx, muts)
	c.snap("after the reverse maps")
	return err
}

func (c *crashTable) CheckAndPut(ctx context.Context, row []byte, fam string, q, exp []byte, cells []storage.Cell) error {
	if n := c.cas.Add(1); c.at[n] {
		c.snap(fmt.Sprintf("before forward check-and-put %d", n))
	}
	return c.Table.CheckAndPut(ctx, row, fam, q, exp, cells)
}

// TestResolveBatchCrash: a power cut anywhere in a batch leaves at worst
// unused IDs (with reverse maps fsck removes), never a forward map without
// its reverse map, never an ID above MAXID; after the restart the batch
// completes and the table is consistent.
func TestResolveBatchCrash(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d crash points (-uid.crash.iters)", seed, *batchCrashIters)
	const n = 300
	mem := vfs.NewCrashableMem()
	db, err := pebble.Open("/uid", &pebble.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := openUIDs(t, db, Options{})
	mustResolve(t, base, TagV, "old") // a name from before the batch
	ct := &crashTable{Table: base.Table(), fs: mem, at: map[int32]bool{}}
	ct.mu.rng = rand.New(rand.NewPCG(uint64(seed), 7))
	for i := 0; i < *batchCrashIters; i++ {
		ct.at[1+ct.mu.rng.Int32N(n)] = true
	}
	u, err := New(ct, &Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	names := make([][]byte, n)
	kinds := make([]Kind, n)
	for i := range names {
		names[i], kinds[i] = fmt.Appendf(nil, "host%03d", i), TagV
	}
	if err := u.ResolveBatch(ctx, TagV, names, make([]ID, n)); err != nil {
		t.Fatal(err)
	}
	for _, c := range ct.mu.clones {
		checkCrashClone(t, c, kinds, names)
	}
}

func checkCrashClone(t *testing.T, c crashClone, kinds []Kind, names [][]byte) {
	t.Helper()
	db, err := pebble.Open("/uid", &pebble.Options{FS: c.fs})
	if err != nil {
		t.Fatalf("%s: reopen: %v", c.where, err)
	}
	defer db.Close()
	u := openUIDs(t, db, Options{})
	r, err := u.Fsck(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		if p.Class != MaxIDCountMismatch && p.Class != ReverseWithoutForward {
			t.Errorf("%s: %s: %s", c.where, p.Class, p.Message)
		}
	}
	if id := mustResolve(t, u, TagV, "old"); id != 1 {
		t.Errorf("%s: the name from before the batch has uid %d", c.where, id)
	}
	ids := make([]ID, len(names))
	if err := u.ResolveBatch(ctx, TagV, names, ids); err != nil {
		t.Fatalf("%s: batch after restart: %v", c.where, err)
	}
	// The crash's orphan reverse maps are fsck's to remove.
	if r, err := u.Fsck(ctx, true); err != nil || r.Unfixed() != 0 {
		t.Errorf("%s: fsck -fix: %v, %+v", c.where, err, r.Problems)
	}
	checkTable(t, u.Table(), append(kinds, TagV), append(names, []byte("old")), [][]ID{append(ids, 1)}, true)
	t.Logf("%s: %d forward, %d reverse maps before the restart's batch, max id %d",
		c.where, r.Forward[TagV], r.Reverse[TagV], r.MaxID[TagV])
}
