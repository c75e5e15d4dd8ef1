package pebble

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// fakeClock is a settable clock for TTL tests.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func openInternal(t testing.TB, dir string, o *Options) *DB {
	t.Helper()
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func ensure(t testing.TB, db *DB, s storage.TableSpec) *table {
	t.Helper()
	if err := db.EnsureTable(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	tb, err := db.Table(context.Background(), s.Name)
	if err != nil {
		t.Fatal(err)
	}
	return tb.(*table)
}

// dirSize sums the sizes of the files under dir: all of them, and those
// that are not write-ahead logs. Pebble keeps up to
// MemTableStopWritesThreshold+1 finished logs for reuse, so their size is
// bounded by the memtable size, not by the data kept.
func dirSize(t testing.TB, dir string) (total, data int64) {
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted by pebble's background cleaner meanwhile
		}
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil {
			total += info.Size()
			if filepath.Ext(p) != ".log" {
				data += info.Size()
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, data
}

// rawKeys counts the pebble keys of a table.
func rawKeys(t testing.TB, tb *table) int {
	lo, hi := tb.rowBounds(nil, nil, nil, nil)
	it, err := tb.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExpiredDataSpaceComesBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := newFakeClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	db := openInternal(t, dir, &Options{Clock: clock.Now, GCInterval: -1, MemTableSize: 4 << 20})
	tb := ensure(t, db, storage.TableSpec{Name: "ts", Families: []storage.FamilySpec{{Name: "t", TTL: time.Hour}}})
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 256)
	for r := 0; r < 80; r++ {
		cells := make([]storage.Cell, 100)
		for i := range cells {
			for j := range val {
				val[j] = byte(rng.Uint32()) // incompressible
			}
			cells[i] = storage.Cell{Family: "t", Qualifier: binary.BigEndian.AppendUint16(nil, uint16(i)), Value: append([]byte(nil), val...)}
		}
		if err := tb.Put(ctx, binary.BigEndian.AppendUint32(nil, uint32(r)), cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	beforeTotal, before := dirSize(t, dir)
	clock.Advance(2 * time.Hour)
	if _, err := tb.Get(ctx, []byte{0, 0, 0, 1}, nil); err == nil {
		t.Fatal("expired row still readable before GC")
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	afterTotal, after := waitDirBelow(t, dir, before/20)
	t.Logf("data dir %d bytes (%d without logs) before expiry, %d (%d) after GC and compaction",
		beforeTotal, before, afterTotal, after)
	if afterTotal >= beforeTotal {
		t.Fatalf("data dir did not shrink: %d bytes before, %d after", beforeTotal, afterTotal)
	}
	if n := rawKeys(t, tb); n != 0 {
		t.Fatalf("%d expired keys left in pebble after Compact", n)
	}
}

// waitDirBelow polls until the non-log files of dir sum below limit (pebble
// deletes obsolete files in the background) and fails after a few seconds.
func waitDirBelow(t testing.TB, dir string, limit int64) (total, data int64) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		total, data = dirSize(t, dir)
		if data < limit {
			return total, data
		}
		if time.Now().After(deadline) {
			t.Fatalf("data dir still holds %d bytes outside logs, want below %d", data, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGCTrimsSurplusVersions(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "v", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 2}, {Name: "all"}}})
	for ts := int64(1); ts <= 5; ts++ {
		err := tb.Put(ctx, []byte("row"), []storage.Cell{
			{Family: "f", Qualifier: []byte("q"), Timestamp: ts * 1000, Value: []byte{byte(ts)}},
			{Family: "all", Qualifier: []byte("q"), Timestamp: ts * 1000, Value: []byte{byte(ts)}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := rawKeys(t, tb); n != 10 {
		t.Fatalf("%d raw keys before GC, want 10", n)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rawKeys(t, tb); n != 7 {
		t.Fatalf("%d raw keys after GC, want 7 (2 kept of f, 5 of the unlimited family)", n)
	}
	cells, err := tb.Get(ctx, []byte("row"), &storage.ReadOptions{Families: []string{"f"}})
	if err != nil || len(cells) != 2 || cells[0].Timestamp != 5000 || cells[1].Timestamp != 4000 {
		t.Fatalf("Get after GC = %+v, %v", cells, err)
	}
}

func TestBackgroundGCRuns(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Now())
	db := openInternal(t, t.TempDir(), &Options{Clock: clock.Now, GCInterval: 10 * time.Millisecond})
	tb := ensure(t, db, storage.TableSpec{Name: "x", Families: []storage.FamilySpec{{Name: "f", TTL: time.Minute}}})
	if err := tb.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	deadline := time.Now().Add(5 * time.Second)
	for rawKeys(t, tb) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("background collector did not delete the expired cell")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGCDuringWritesKeepsNewest runs the collector while a writer adds
// versions: trimming surplus versions must never delete the newest one.
func TestGCDuringWritesKeepsNewest(t *testing.T) {
	ctx := context.Background()
	// Without fsync the writer is fast enough to race many collector passes.
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1, noSync: true})
	tb := ensure(t, db, storage.TableSpec{Name: "g", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 1}}})
	stop := make(chan struct{})
	passes := make(chan int)
	go func() {
		n := 0
		defer func() { passes <- n }()
		for ; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.collectGarbage(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	const puts = 500
	for ts := int64(1); ts <= puts; ts++ {
		row := []byte{'r', byte(ts % 4)}
		if err := tb.Put(ctx, row, []storage.Cell{{Family: "f", Timestamp: ts * 1000, Value: []byte{byte(ts)}}}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	t.Logf("%d puts raced %d collector passes", puts, <-passes)
	for r := int64(0); r < 4; r++ {
		want := (puts - (puts-r)%4) * 1000 // the last ts written to row r
		cells, err := tb.Get(ctx, []byte{'r', byte(r)}, nil)
		if err != nil || len(cells) != 1 || cells[0].Timestamp != want {
			t.Fatalf("row %d after GC: %+v, %v; want one version at %d", r, cells, err, want)
		}
	}
}

func TestScanStopsOnCancel(t *testing.T) {
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "c", Families: []storage.FamilySpec{{Name: "f"}}})
	for r := 0; r < 10; r++ {
		cells := make([]storage.Cell, 100)
		for i := range cells {
			cells[i] = storage.Cell{Family: "f", Qualifier: []byte{byte(i)}, Timestamp: 1000}
		}
		if err := tb.Put(context.Background(), []byte{byte(r)}, cells); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := tb.Scan(ctx, nil)
	defer sc.Close()
	n := 0
	for sc.Next() {
		if n += len(sc.Row().Cells); n >= 10 {
			cancel()
		}
	}
	if !errors.Is(sc.Err(), context.Canceled) || n >= 1000 {
		t.Fatalf("scan after cancel: %d cells, err %v; want it to stop with context.Canceled", n, sc.Err())
	}
}
