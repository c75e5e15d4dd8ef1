package pebble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
)

// stepFS takes a crash clone of mem before every change to the store's
// files while it is armed: each file created, renamed, reused or removed
// and each sync of a file or directory.
type stepFS struct {
	vfs.FS
	mem   *vfs.MemFS
	rng   *rand.Rand
	armed atomic.Bool

	mu     sync.Mutex
	clones []stepClone
}

type stepClone struct {
	step string
	fs   *vfs.MemFS
	kept int // percent of unsynced data the clone kept
}

func (s *stepFS) step(what string) {
	if !s.armed.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clones = append(s.clones, stepClone{step: what, fs: s.mem.CrashClone(vfs.CrashCloneCfg{})})
	kept := s.rng.IntN(101)
	s.clones = append(s.clones, stepClone{step: what, kept: kept,
		fs: s.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: kept, RNG: s.rng})})
}

func (s *stepFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	s.step("create " + name)
	f, err := s.FS.Create(name, c)
	return s.wrap(name, f), err
}

func (s *stepFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, o ...vfs.OpenOption) (vfs.File, error) {
	f, err := s.FS.OpenReadWrite(name, c, o...)
	return s.wrap(name, f), err
}

func (s *stepFS) OpenDir(name string) (vfs.File, error) {
	f, err := s.FS.OpenDir(name)
	return s.wrap(name, f), err
}

func (s *stepFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	s.step("reuse " + oldname + " as " + newname)
	f, err := s.FS.ReuseForWrite(oldname, newname, c)
	return s.wrap(newname, f), err
}

func (s *stepFS) Remove(name string) error {
	s.step("remove " + name)
	return s.FS.Remove(name)
}

func (s *stepFS) Rename(oldname, newname string) error {
	s.step("rename " + oldname + " to " + newname)
	return s.FS.Rename(oldname, newname)
}

func (s *stepFS) Link(oldname, newname string) error {
	s.step("link " + oldname + " to " + newname)
	return s.FS.Link(oldname, newname)
}

func (s *stepFS) wrap(name string, f vfs.File) vfs.File {
	if f == nil {
		return nil
	}
	return &stepFile{File: f, fs: s, name: name}
}

type stepFile struct {
	vfs.File
	fs   *stepFS
	name string
}

func (f *stepFile) Sync() error {
	f.fs.step("sync " + f.name)
	return f.File.Sync()
}

func (f *stepFile) SyncData() error {
	f.fs.step("sync data " + f.name)
	return f.File.SyncData()
}

func (f *stepFile) SyncTo(n int64) (bool, error) {
	f.fs.step("sync to " + f.name)
	return f.File.SyncTo(n)
}

// listLogs returns the pebble log files in /db and their sizes.
func listLogs(t testing.TB, fs vfs.FS) map[string]int64 {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	logs := map[string]int64{}
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			st, err := fs.Stat(fs.PathJoin("/db", n))
			if err != nil {
				t.Fatal(err)
			}
			logs[n] = st.Size()
		}
	}
	return logs
}

// TestCloseCrashEveryStep crashes a clean Close at every change it makes to
// the store's files (the final flush's sstable and manifest, pebble's last
// log, the removal of the obsolete logs): every clone, with nothing or a
// random part of the unsynced data kept, opens with every acknowledged
// batch. It also checks what the close leaves: no log, since the last
// one held nothing but its trailer.
func TestCloseCrashEveryStep(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	s := &stepFS{mem: vfs.NewCrashableMem(), rng: rand.New(rand.NewPCG(uint64(seed), 22))}
	s.FS = s.mem
	db := openOn(t, s, false)
	tb := ensure(t, db, crashSpec)
	ctx := context.Background()
	acked := map[batchID]bool{}
	// About 3 MiB through 1 MiB memtables: several logs, some recycled,
	// and a memtable that is not yet flushed.
	for seq := 0; seq < 1500; seq++ {
		b := batchID{0, 0, seq}
		if err := writeBatch(ctx, tb, b); err != nil {
			t.Fatal(err)
		}
		acked[b] = true
	}
	before := listLogs(t, s.mem)
	if len(before) < 2 {
		t.Fatalf("%d log files before close (%v): the test needs obsolete logs to remove", len(before), before)
	}
	s.armed.Store(true)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s.armed.Store(false)
	after := listLogs(t, s.mem)
	t.Logf("logs before close %v, after %v; %d crash clones", before, after, len(s.clones))
	if len(after) != 0 {
		t.Fatalf("%d log files after a clean close (%v), want none", len(after), after)
	}
	if len(s.clones) < 10 {
		t.Fatalf("only %d crash clones: the close path made fewer changes than expected", len(s.clones))
	}
	for i, c := range s.clones {
		if invariants.RaceEnabled && i%4 != 0 {
			// Every clone opens and reads alike; the test step checks
			// all of them, the race step a quarter (the close path's
			// goroutines ran with the detector on all the same).
			continue
		}
		t.Run(fmt.Sprintf("%02d before %s, %d%% unsynced kept", i, c.step, c.kept), func(t *testing.T) {
			clone := openOn(t, c.fs, false)
			found := checkBatches(t, clone, acked)
			if err := clone.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if found != len(acked) {
				t.Fatalf("%d batches, want %d", found, len(acked))
			}
		})
	}
	final := openOn(t, s.mem, false)
	checkBatches(t, final, acked)
	if err := final.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseKeepsOneManifest: pebble keeps the previous manifest beside the
// current one; a clean close removes it, and the store opens as before.
func TestCloseKeepsOneManifest(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{FS: mem, GCInterval: -1}
	for i := range 3 {
		d, err := Open("db", opts)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if i == 0 {
			if err := d.EnsureTable(context.Background(), storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "f"}}}); err != nil {
				t.Fatal(err)
			}
		}
		specs, err := d.Tables(context.Background())
		if err != nil || len(specs) != 1 {
			t.Fatalf("open %d: tables %v, %v", i, specs, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		names, err := mem.List("db")
		if err != nil {
			t.Fatal(err)
		}
		var manifests []string
		for _, n := range names {
			if strings.HasPrefix(n, "MANIFEST-") {
				manifests = append(manifests, n)
			}
		}
		if len(manifests) != 1 {
			t.Fatalf("after close %d: manifests %v, want one", i, manifests)
		}
	}
}
