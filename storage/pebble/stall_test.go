package pebble_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// gatedFS holds every sstable creation until open is closed, so flushes
// cannot finish and the memtables fill up.
type gatedFS struct {
	vfs.FS
	open chan struct{}
}

func (g gatedFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasSuffix(name, ".sst") {
		<-g.open
	}
	return g.FS.Create(name, c)
}

// TestWriteStallObserved forces a write stall: with sstable creation held,
// the first full memtable cannot flush, the second fills and pebble holds
// writes back. Stalled reports the stall while it lasts; once flushes may
// go on it ends, and Options.ObserveWriteStall is given its duration, at
// least as long as Stalled saw.
func TestWriteStallObserved(t *testing.T) {
	fs := gatedFS{FS: vfs.NewMem(), open: make(chan struct{})}
	var mu sync.Mutex
	var stalls []time.Duration
	db, err := pebble.Open("/data", &pebble.Options{
		FS: fs, MemTableSize: 1 << 20, GCInterval: -1, Logger: slog.New(slog.DiscardHandler),
		ObserveWriteStall: func(d time.Duration) {
			mu.Lock()
			stalls = append(stalls, d)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(fs.open)
		}
	}
	defer func() { release(); db.Close() }()
	tb := mustTable(t, db, spec)

	// The writer stalls part-way; it ends once flushes may go on.
	done := make(chan error, 1)
	go func() {
		value := make([]byte, 4<<10)
		for i := range 1000 { // 4 MiB: four memtables' worth
			if err := tb.Put(ctx, fmt.Appendf(nil, "row%04d", i), []storage.Cell{{Family: "f", Value: value}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	eventually(t, "a write stall", func() bool { return db.Stalled() > 0 })
	seen := db.Stalled()
	mu.Lock()
	if len(stalls) != 0 {
		t.Errorf("a stall still going was observed: %v", stalls)
	}
	mu.Unlock()
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stall observed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(stalls) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if stalls[0] < seen {
		t.Errorf("stall observed as %v, but Stalled saw %v while it lasted", stalls[0], seen)
	}
	// Pebble ends a stall in the write that waited, before it returns.
	if d := db.Stalled(); d != 0 {
		t.Errorf("Stalled = %v after the writer finished", d)
	}
}
