package flush

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

var (
	crashIters = flag.Int("ingest.crash.iters", 3, "SIGKILL rounds of TestCrashKillStore (the long run uses 20)")
	crashSeed  = flag.Uint64("ingest.crash.seed", 0, "seed of TestCrashKillStore's kill times (0: from the clock); the test logs the one it used")
)

const (
	crashStoreDirEnv = "TSD_INGEST_CRASH_STORE_DIR"
	crashSeries      = ingesttest.CrashSeries
)

// Batch b writes, per series, a point at minute b and, for b >= lateLag
// with b%5 == 0, a late point half a minute after minute b-lateLag, two
// hours back: into a row flushed long ago, so it is queued and compacted.
const lateLag = 120

func storeMain(b, s int) series.Point {
	return series.IntPoint(t0+int64(b)*60_000, int64(b*crashSeries+s))
}

func hasLate(b int) bool { return b >= lateLag && b%5 == 0 }

func storeLate(b, s int) series.Point {
	return series.IntPoint(t0+int64(b-lateLag)*60_000+30_000, -int64(b*crashSeries+s))
}

// storeExpected returns the point a child writes at time tm for series s,
// and the batch that writes it.
func storeExpected(tm int64, s int) (series.Point, int, bool) {
	d := tm - t0
	switch {
	case d >= 0 && d%60_000 == 0:
		b := int(d / 60_000)
		return storeMain(b, s), b, true
	case d >= 0 && d%60_000 == 30_000:
		b := int(d/60_000) + lateLag
		return storeLate(b, s), b, hasLate(b)
	}
	return series.Point{}, 0, false
}

// TestCrashKillStore is TestCrashKill with the whole write path: the child
// commits batches (with late points) and flushes and compacts into a pebble
// store every ten batches; after each SIGKILL every acknowledged point is
// read back once, through the store and the replayed head.
func TestCrashKillStore(t *testing.T) {
	if dir := os.Getenv(crashStoreDirEnv); dir != "" {
		crashStoreChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	rng := ingesttest.CrashRand(t, *crashSeed, *crashIters, 2)
	acked := -1
	for iter := range *crashIters {
		last, started := ingesttest.RunAndKill(t, "TestCrashKillStore", os.Environ(), crashStoreDirEnv, dir, acked+1, rng)
		if last < acked+1 {
			t.Fatalf("iter %d: child acknowledged nothing", iter)
		}
		acked = last
		checkCrashStore(t, dir, acked, started)
	}
}

// crashStoreChild commits batches forever, printing "ack <batch>" after
// each, and flushes and compacts every ten batches on a clock that follows
// the newest point.
func crashStoreChild(t *testing.T, dir string) {
	start, _ := strconv.Atoi(os.Getenv(ingesttest.CrashStartEnv))
	var now atomic.Int64
	now.Store(storeMain(start, 0).T)
	quiet := slog.New(slog.DiscardHandler)
	h, err := head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{
		Logger: quiet, Clock: func() time.Time { return time.UnixMilli(now.Load()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := openStoreAt(t, vfs.Default, filepath.Join(dir, "db"))
	f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, Meta: s.Meta, WriterID: 5, Grace: time.Minute, Spread: -1, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.NewCompactor(&CompactOptions{RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := h.Appender()
	for b := start; b < start+1_000_000; b++ {
		for s := range crashSeries {
			key := ingesttest.SeriesKey(1, 1, uint32(s))
			a.AppendKey(key, storeMain(b, s))
			if hasLate(b) {
				a.AppendKey(key, storeLate(b, s))
			}
		}
		if err := a.Commit(b%7 == 0); err != nil {
			t.Fatal(err)
		}
		now.Store(storeMain(b, 0).T)
		fmt.Printf("ack %d\n", b)
		if b%10 == 9 {
			if _, err := f.Flush(ctx, time.UnixMilli(now.Load()), false); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compact(ctx, time.UnixMilli(now.Load()), false); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkCrashStore reopens store and head and checks, per series, that the
// points of batches 0..acked are all there, that nothing else is but
// points of batches up to started, each with the value its batch wrote.
func checkCrashStore(t *testing.T, dir string, acked, started int) {
	t.Helper()
	s := openStoreAt(t, vfs.Default, filepath.Join(dir, "db"))
	defer s.DB.Close()
	h, err := head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if st := h.ReplayStats(); st.BadRecords > 0 || st.OrphanSamples > 0 || st.WAL.CorruptRecords > 0 {
		t.Fatalf("replay after SIGKILL: %+v", st)
	}
	hours := started/60 + 2
	if acked >= 80 { // hour 0 is flushed
		pts, cols := s.Points(t, ingesttest.SeriesKey(1, 1, 0), t0)
		if len(pts) < 60 || cols == 0 {
			t.Fatalf("hour 0 of series 0 in the store: %d points in %d columns", len(pts), cols)
		}
		t.Logf("acked %d: hour 0 of series 0 has %d points in %d columns; %d rows queued", acked, len(pts), cols, len(queue(t, s)))
	}
	for sr := range crashSeries {
		got := readAll(t, s, h, ingesttest.SeriesKey(1, 1, uint32(sr)), hours)
		for tm, p := range got {
			want, b, ok := storeExpected(tm, sr)
			if !ok || b > started || p != want {
				t.Fatalf("series %d: %+v at minute %.1f was never written (batch %d, started %d)", sr, p, float64(tm-t0)/60_000, b, started)
			}
		}
		for b := 0; b <= acked; b++ {
			if p := storeMain(b, sr); got[p.T] != p {
				t.Fatalf("series %d: acknowledged point of batch %d lost (acked %d)", sr, b, acked)
			}
			if p := storeLate(b, sr); hasLate(b) && got[p.T] != p {
				t.Fatalf("series %d: acknowledged late point of batch %d lost (acked %d)", sr, b, acked)
			}
		}
	}
}
