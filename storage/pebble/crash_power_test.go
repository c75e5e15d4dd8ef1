package pebble

import (
	"context"
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
)

// powerWriters writes batches from several goroutines into a store and
// records each batch once Apply has returned.
type powerWriters struct {
	mu    sync.Mutex
	acked map[batchID]bool
	ctrs  map[int]int64 // acknowledged counter value per writer
	n     atomic.Int64
	stop  atomic.Bool
	wg    sync.WaitGroup
	err   atomic.Pointer[error]
}

// Each writer also increments its own counter after every batch, so the
// durability of Increment is checked too.
func startPowerWriters(tb, ctr storage.Table, run, writers, batches int) *powerWriters {
	p := &powerWriters{acked: map[batchID]bool{}, ctrs: map[int]int64{}}
	for w := 0; w < writers; w++ {
		p.wg.Go(func() {
			for seq := 0; seq < batches && !p.stop.Load(); seq++ {
				b := batchID{run, w, seq}
				if err := writeBatch(context.Background(), tb, b); err != nil {
					p.err.Store(&err)
					return
				}
				v, err := ctr.Increment(context.Background(), counterRow(w), "f", nil, 1)
				if err != nil {
					p.err.Store(&err)
					return
				}
				p.mu.Lock()
				p.acked[b] = true
				p.ctrs[w] = v
				p.mu.Unlock()
				p.n.Add(1)
			}
		})
	}
	return p
}

// snapshot copies the batches and counter values acknowledged so far.
func (p *powerWriters) snapshot() (map[batchID]bool, map[int]int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.acked), maps.Clone(p.ctrs)
}

var ctrSpec = storage.TableSpec{Name: "ctr", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 1}}}

func counterRow(w int) []byte { return []byte{'c', 0, byte(w)} }

func (p *powerWriters) halt(t *testing.T) {
	p.stop.Store(true)
	p.wg.Wait()
	if err := p.err.Load(); err != nil {
		t.Fatalf("writer: %v", *err)
	}
}

// openOn opens the store at /db on fs.
func openOn(t testing.TB, fs vfs.FS, noSync bool) *DB {
	t.Helper()
	db, err := Open("/db", &Options{FS: fs, GCInterval: -1, MemTableSize: 1 << 20, CacheSize: 1 << 20, noSync: noSync})
	if err != nil {
		t.Fatalf("open on crash clone: %v", err)
	}
	return db
}

// TestPowerLoss simulates power failures: while writers run on a crashable
// in-memory filesystem, it takes crash clones (everything unsynced dropped,
// or a random part of it kept) and checks on each that every batch
// acknowledged before the clone survives, nothing half-written is visible
// and the store opens cleanly. Unlike a SIGKILL, this catches a missing
// fsync; the NoSync sub-test shows it does.
func TestPowerLoss(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d rounds (-pebble.crash.iters)", seed, *crashIters)
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	mem := vfs.NewCrashableMem()
	for run := 0; run < *crashIters; run++ {
		db := openOn(t, mem, false)
		tb, ctr := ensure(t, db, crashSpec), ensure(t, db, ctrSpec)
		writers, batches := 4, 150
		if invariants.RaceEnabled {
			batches = 40 // pebble runs ~10x slower under the race detector
		}
		w := startPowerWriters(tb, ctr, run, writers, batches)
		targets := []int{rng.IntN(writers * batches), rng.IntN(writers * batches), rng.IntN(writers * batches)}
		slices.Sort(targets)
		for k, target := range targets {
			// Clone at a random point of the writes, not after them.
			for w.n.Load() < int64(target) {
				time.Sleep(100 * time.Microsecond)
			}
			acked, ctrs := w.snapshot()
			cfg := vfs.CrashCloneCfg{}
			if k > 0 {
				cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng}
			}
			found := checkClone(t, mem.CrashClone(cfg), acked, ctrs)
			t.Logf("round %d clone %d (unsynced kept %d%%): %d acknowledged, %d batches survive",
				run, k, cfg.UnsyncedDataPercent, len(acked), found)
		}
		w.halt(t)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		// The next round continues on a crash clone of this one.
		mem = mem.CrashClone(vfs.CrashCloneCfg{})
	}
}

// checkClone opens the store on a crash clone and checks it against the
// acknowledged batches and counter values.
func checkClone(t *testing.T, fs vfs.FS, acked map[batchID]bool, ctrs map[int]int64) int {
	t.Helper()
	db := openOn(t, fs, false)
	defer db.Close()
	found := checkBatches(t, db, acked)
	ctr, err := db.Table(context.Background(), ctrSpec.Name)
	if err != nil {
		t.Fatal(err)
	}
	for w, want := range ctrs {
		cells, err := ctr.Get(context.Background(), counterRow(w), nil)
		if err != nil || len(cells) != 1 {
			t.Fatalf("counter %d after power loss: %v, %v", w, cells, err)
		}
		if got := int64(binary.BigEndian.Uint64(cells[0].Value)); got < want {
			t.Fatalf("counter %d is %d after power loss, but %d was acknowledged", w, got, want)
		}
	}
	return found
}

// TestPowerLossDetectsMissingSync writes without fsync and shows the crash
// clone loses acknowledged batches, so TestPowerLoss would catch an engine
// that forgot to sync.
func TestPowerLossDetectsMissingSync(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db := openOn(t, mem, true)
	defer db.Close()
	ctx := context.Background()
	if err := db.EnsureTable(ctx, crashSpec); err != nil {
		t.Fatal(err)
	}
	tb, _ := db.Table(ctx, crashTable)
	acked := map[batchID]bool{}
	for seq := 0; seq < 20; seq++ {
		b := batchID{0, 0, seq}
		if err := writeBatch(ctx, tb, b); err != nil {
			t.Fatal(err)
		}
		acked[b] = true
	}
	clone := openOn(t, mem.CrashClone(vfs.CrashCloneCfg{}), false)
	defer clone.Close()
	_, missing, half := audit(t, clone, acked)
	if len(half) > 0 {
		t.Fatalf("half-visible batches even without sync: %v", half)
	}
	if len(missing) == 0 {
		t.Fatal("every unsynced batch survived the crash clone: the power-loss test could not detect a missing fsync")
	}
	t.Logf("without fsync %d of %d acknowledged batches were lost", len(missing), len(acked))
}
