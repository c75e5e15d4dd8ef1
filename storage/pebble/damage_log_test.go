package pebble

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/storage"
)

// TestDamagedLogSalvaged flips one byte in the middle of pebble's newest
// log after a power loss, at several places. Pebble refuses such a log
// (its WAL sync chunks tell damage from a torn end); the store salvages
// it: it opens with every acknowledged batch but those whose records sat
// in the damaged block, keeps the damaged file beside the log, reports the
// salvage, and goes on writing and reopening. Stores at formats before
// FormatWALSyncChunks fail here: pebble takes the damage for the log's
// end and opens without a word, every record after it gone (options.go
// keeps FormatNewest, with row-block sstables, for this).
func TestDamagedLogSalvaged(t *testing.T) {
	// 150 batches fill the first log of the new store; with 300 pebble
	// has moved on to a second by the end.
	for _, n := range []int{150, 300} {
		t.Run(fmt.Sprintf("batches=%d", n), func(t *testing.T) { damageNewestLog(t, n) })
	}
}

// damageNewestLog writes n batches, takes a crash clone and flips a byte
// of its newest log at several places, each in a copy.
func damageNewestLog(t *testing.T, n int) {
	mem := vfs.NewCrashableMem()
	db := openOn(t, mem, false)
	acked := map[batchID]bool{}
	writeAcked(t, ensure(t, db, crashSpec), acked, 0, n)
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log := newestLog(t, crashed)
	orig := vfstest.ReadFile(t, crashed, log)
	if len(orig) < 96<<10 {
		t.Fatalf("newest log %s holds %d bytes: too little to damage its middle", log, len(orig))
	}
	for _, at := range []int{len(orig) / 4, len(orig) / 2, 3 * len(orig) / 4} {
		fs := copyDir(t, crashed)
		b := slices.Clone(orig)
		b[at] ^= 0x10
		vfstest.WriteFile(t, fs, log, b)
		db, err := Open("/db", &Options{FS: fs, GCInterval: -1, MemTableSize: 1 << 20, CacheSize: 1 << 20})
		if err != nil {
			t.Fatalf("byte %d of %s flipped: open: %v", at, log, err)
		}
		checkSalvage(t, db, fs, log, at, b, acked)
		// The store goes on: more writes, a clean stop, a plain reopen.
		more := maps.Clone(acked)
		writeAcked(t, ensure(t, db, crashSpec), more, 1, 20)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db, err = Open("/db", &Options{FS: fs, GCInterval: -1, MemTableSize: 1 << 20, CacheSize: 1 << 20})
		if err != nil {
			t.Fatalf("reopen after the salvage: %v", err)
		}
		if s := db.SalvagedLogs(); len(s) != 0 {
			t.Errorf("reopen salvaged again: %+v", s)
		}
		_, missing, half := audit(t, db, more)
		for _, m := range missing {
			if m.run == 1 {
				t.Errorf("batch %+v written after the salvage is missing", m)
			}
		}
		if len(half) > 0 {
			t.Errorf("%d half-visible batches after the reopen", len(half))
		}
		db.Close()
	}
}

// TestNewStoreLogHasSyncChunks checks the first log of a new store: pebble
// starts it before raising the store to its format, without the sync
// chunks that tell its damage from its torn end, unless Open opens the
// store again (logsBehind). Byte 6 of a chunk is its kind; the sync chunks
// are kinds 9 to 12.
func TestNewStoreLogHasSyncChunks(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db := openOn(t, mem, false)
	if err := writeBatch(context.Background(), ensure(t, db, crashSpec), batchID{}); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log := newestLog(t, crashed)
	if b := vfstest.ReadFile(t, crashed, log); len(b) < 7 || b[6] < 9 || b[6] > 12 {
		t.Fatalf("%s starts with a chunk of kind %v, want a sync chunk (9 to 12)", log, b[min(6, len(b)-1)])
	}
}

// checkSalvage checks the store db opened on fs after byte at of log was
// flipped (damaged holds the file as it was): one salvage reported at the
// flip's block, the damaged file kept, no batch half visible, and the
// missing batches one run of consecutive batches that fits in the damaged
// block.
func checkSalvage(t *testing.T, db *DB, fs vfs.FS, log string, at int, damaged []byte, acked map[batchID]bool) {
	t.Helper()
	s := db.SalvagedLogs()
	if len(s) != 1 || s[0].Path != log || !slices.Equal(s[0].Damaged, []int64{int64(at - at%logBlockSize)}) {
		t.Errorf("byte %d flipped: SalvagedLogs = %+v, want %s damaged at %d", at, s, log, at-at%logBlockSize)
	}
	if kept := vfstest.ReadFile(t, fs, log+".damaged"); !bytes.Equal(kept, damaged) {
		t.Errorf("byte %d flipped: %s.damaged is not the damaged log", at, log)
	}
	found, missing, half := audit(t, db, acked)
	if len(half) > 0 {
		t.Errorf("byte %d flipped: %d half-visible batches (e.g. %v)", at, len(half), first(half))
	}
	seqs := make([]int, 0, len(missing))
	for _, m := range missing {
		seqs = append(seqs, m.seq)
	}
	slices.Sort(seqs)
	// A batch's record is about 1.4 KiB: one 32 KiB block holds at most
	// 24 of them, and one more may start in the block before.
	if len(seqs) == 0 || len(seqs) > 25 || seqs[len(seqs)-1]-seqs[0] != len(seqs)-1 {
		t.Errorf("byte %d flipped: %d batches found, missing %v; want one run of at most 25", at, found, seqs)
	}
}

// newestLog returns the path of the highest-numbered pebble log in /db.
func newestLog(t *testing.T, fs vfs.FS) string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	best, bestNum := "", uint64(0)
	for _, n := range names {
		if num, ok := parseLogName(n); ok && (best == "" || num > bestNum) {
			best, bestNum = n, num
		}
	}
	if best == "" {
		t.Fatal("no pebble log in /db")
	}
	return "/db/" + best
}

// writeAcked writes batches 0 to n-1 of run to tb, each acknowledged
// before the next, and records them in acked.
func writeAcked(t testing.TB, tb storage.Table, acked map[batchID]bool, run, n int) {
	t.Helper()
	for seq := range n {
		b := batchID{run, 0, seq}
		if err := writeBatch(context.Background(), tb, b); err != nil {
			t.Fatal(err)
		}
		acked[b] = true
	}
}

// copyDir copies every file of /db into a new in-memory file system.
func copyDir(t testing.TB, fs vfs.FS) vfs.FS {
	t.Helper()
	out := vfs.NewMem()
	if err := out.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		vfstest.WriteFile(t, out, "/db/"+n, vfstest.ReadFile(t, fs, "/db/"+n))
	}
	return out
}
