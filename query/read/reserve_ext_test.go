package read_test

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/read"
)

// TestFillReserve: a reader's reserve is empty until a read asks for it,
// or until FillReserve, after which it fills in the background to its
// size; the first read of stored rows then caches every one of them,
// where with an empty reserve at least the first is read uncached.
func TestFillReserve(t *testing.T) {
	// Two blocks of a MiB's worth of 24-byte points.
	const reserve = 2 * ((1 << 20) / 24 * 24)
	s := openStack(t)
	loadSplit(t, s)
	s.flushAll(t)
	all := s.selection(t, "m")
	sel := read.Selection{Series: all, Start: t0, End: t0 + 6*hourMs, Plan: read.PlanSeries}
	firstRead := func(fill bool) read.Stats {
		t.Helper()
		r := s.reader(t, read.Options{RowCacheReserve: reserve})
		if got := r.Stats().CacheReserve; got != 0 {
			t.Fatalf("a new reader has %d bytes ready, want 0 before any read", got)
		}
		if fill {
			r.FillReserve()
			deadline := time.Now().Add(20 * time.Second)
			for r.Stats().CacheReserve < reserve {
				if time.Now().After(deadline) {
					t.Fatalf("reserve %d bytes 20 s after FillReserve, want %d", r.Stats().CacheReserve, reserve)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		readAll(t, s, r, sel)
		return r.Stats()
	}
	// The first row to find the reserve empty starts the filler and is
	// read uncached; rows after it may find the first block made.
	cold := firstRead(false)
	if cold.CacheMisses == 0 || cold.CacheRows >= cold.CacheMisses {
		t.Fatalf("empty reserve: first read cached %d of the %d rows it read, want fewer", cold.CacheRows, cold.CacheMisses)
	}
	warm := firstRead(true)
	if warm.CacheRows != cold.CacheMisses {
		t.Fatalf("filled reserve: first read cached %d rows, want every one of the %d it read", warm.CacheRows, cold.CacheMisses)
	}
}
