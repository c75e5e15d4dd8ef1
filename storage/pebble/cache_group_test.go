package pebble_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// TestBlockCacheHoldsBlocksBesideMemtables reads the same sstable rows
// twice and wants the second read served from
// the block cache. Pebble charges each memtable, and each flushed one a
// pooled iterator still pins, against the block cache: with a 64 MiB
// cache and two 32 MiB memtables accounted, nothing was cached and every
// read decompressed its blocks again.
func TestBlockCacheHoldsBlocksBesideMemtables(t *testing.T) {
	ctx := context.Background()
	// A cache the size of one memtable (the defaults are 64 MiB and 32 MiB,
	// but a memtable reaches its full size only after several flushes).
	db, err := pebble.Open(t.TempDir(), &pebble.Options{CacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb := mustTable(t, db, storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "f"}}})
	val := make([]byte, 200)
	for i := range 2000 {
		if err := tb.Put(ctx, fmt.Appendf(nil, "row%05d", i), []storage.Cell{{Family: "f", Qualifier: []byte("q"), Value: val}}); err != nil {
			t.Fatal(err)
		}
	}
	scanAll := func() int {
		sc := tb.Scan(ctx, &storage.ScanOptions{})
		defer sc.Close()
		n := 0
		for sc.Next() {
			n++
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Pebble sizes each new memtable twice the last, up to MemTableSize:
	// a store that has flushed a few times runs on full-size memtables.
	// The scan before each flush leaves a pooled iterator pinning the
	// memtable it flushes.
	for i := range 10 {
		if err := tb.Put(ctx, fmt.Appendf(nil, "more%02d", i), []storage.Cell{{Family: "f", Qualifier: []byte("q"), Value: val}}); err != nil {
			t.Fatal(err)
		}
		scanAll()
		if err := db.Compact(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Pebble may still rewrite files in the background after Compact
	// returns (a compaction it scheduled itself, one a scan's read
	// sampling asked for): a file written between the two scans has
	// blocks no scan has read yet. Measure again when one was.
	for attempt := 1; ; attempt++ {
		scanAll()
		compactions := db.Metrics().Compact.Count
		before := db.Metrics().BlockCache
		if n := scanAll(); n != 2010 {
			t.Fatalf("scanned %d rows, want 2010", n)
		}
		after := db.Metrics().BlockCache
		m := db.Metrics()
		if m.Compact.Count != compactions && attempt < 5 {
			t.Logf("a compaction ran between the scans; measuring again")
			continue
		}
		t.Logf("cache %d bytes; %d memtables (%d bytes), %d zombie", after.Size, m.MemTable.Count, m.MemTable.Size, m.MemTable.ZombieCount)
		if hits, misses := after.Hits-before.Hits, after.Misses-before.Misses; hits == 0 || misses > 0 {
			t.Fatalf("second scan of the flushed rows: %d block cache hits, %d misses (cache holds %d bytes; %d memtables, %d zombie)",
				hits, misses, after.Size, m.MemTable.Count, m.MemTable.ZombieCount)
		}
		return
	}
}

// TestApplyGroupOneCommit: tables of one store take a group in one batch
// (nothing written when a mutation is bad), tables of two stores are
// refused, for storage.ApplyGroup to write them one Apply each.
func TestApplyGroupOneCommit(t *testing.T) {
	ctx := context.Background()
	open := func() storage.DB {
		db, err := pebble.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db, other := open(), open()
	fam := []storage.FamilySpec{{Name: "f"}}
	a := mustTable(t, db, storage.TableSpec{Name: "a", Families: fam})
	b := mustTable(t, db, storage.TableSpec{Name: "b", Families: fam})
	c := mustTable(t, other, storage.TableSpec{Name: "c", Families: fam})
	put := func(tbl storage.Table, row string) storage.TableMutations {
		return storage.TableMutations{Table: tbl, Muts: []storage.Mutation{{Row: []byte(row), Cells: []storage.Cell{{Family: "f", Qualifier: []byte("q"), Timestamp: 1000, Value: []byte(row)}}}}}
	}
	g := a.(storage.GroupApplier)
	bad := put(b, "x")
	bad.Muts[0].Row = nil
	if ok, err := g.ApplyGroup(ctx, []storage.TableMutations{put(a, "first"), bad}); !ok || !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("bad group: %v, %v; want true, invalid argument", ok, err)
	}
	if _, err := a.Get(ctx, []byte("first"), nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a row of a refused group was written: %v", err)
	}
	if ok, err := g.ApplyGroup(ctx, []storage.TableMutations{put(a, "r"), put(c, "r")}); ok || err != nil {
		t.Fatalf("tables of two stores: %v, %v; want false, nil", ok, err)
	}
	if ok, err := g.ApplyGroup(ctx, []storage.TableMutations{put(a, "r"), put(b, "r")}); !ok || err != nil {
		t.Fatalf("ApplyGroup: %v, %v", ok, err)
	}
	for _, tbl := range []storage.Table{a, b} {
		if _, err := tbl.Get(ctx, []byte("r"), nil); err != nil {
			t.Fatalf("%s: %v", tbl.Spec().Name, err)
		}
	}
}
