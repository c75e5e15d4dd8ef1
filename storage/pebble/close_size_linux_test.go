package pebble

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/internal/du"
)

// allocated returns the disk blocks allocated to the files under dir
// (du.Allocated): a preallocated log is counted whole though its length is
// what it holds.
func allocated(t testing.TB, dir string) int64 {
	t.Helper()
	n, err := du.Allocated(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCleanCloseSettledSize writes through several logs, stops cleanly and
// compares the blocks the stopped store holds with the same store settled
// (opened again, compacted, closed): at most 1.2×. Before, the obsolete
// logs kept for recycling and the live log's preallocated tail stayed
// allocated until the next start. The store uses one codec on every level
// (CompressionFastest): with the default, compaction also recompresses
// the upper levels' files with the bottom level's zstd (several times
// smaller on this test's repetitive cells), which is not what this test
// measures.
func TestCleanCloseSettledSize(t *testing.T) {
	dir := t.TempDir()
	open := func() *DB {
		db, err := Open(dir, &Options{GCInterval: -1, MemTableSize: 1 << 20, CacheSize: 1 << 20, Compression: CompressionFastest, noSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	ctx := context.Background()
	db := open()
	tb := ensure(t, db, crashSpec)
	for seq := 0; seq < 3000; seq++ {
		if err := writeBatch(ctx, tb, batchID{0, 0, seq}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := allocated(t, dir)
	db = open()
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	settled := allocated(t, dir)
	t.Logf("allocated after a clean stop %d bytes, settled %d bytes (%.2f×)", stopped, settled, float64(stopped)/float64(settled))
	if float64(stopped) > 1.2*float64(settled) {
		t.Fatalf("a clean stop leaves %d bytes allocated, %.2f× the settled %d (at most 1.2×)",
			stopped, float64(stopped)/float64(settled), settled)
	}
}
