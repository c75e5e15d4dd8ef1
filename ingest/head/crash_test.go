package head

import (
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

var (
	crashIters = flag.Int("ingest.crash.iters", 3, "SIGKILL rounds of TestCrashKill (the long run uses 20)")
	crashSeed  = flag.Uint64("ingest.crash.seed", 0, "seed of the crash tests' kill times (0: from the clock); each test logs the one it used")
)

// crashRand returns the crash tests' random source (ingesttest.CrashRand).
func crashRand(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	return ingesttest.CrashRand(t, *crashSeed, *crashIters, stream)
}

const (
	crashDirEnv = "TSD_INGEST_CRASH_DIR"
	crashSeries = ingesttest.CrashSeries
)

// crashPoint is point s of batch b: every batch writes one point per series
// at its own timestamp, so the expected head is known from the batch numbers.
func crashPoint(b, s int) series.Point {
	return series.IntPoint(t0+int64(b)*1000, int64(b*crashSeries+s))
}

// TestCrashKill runs a child process that commits batches through head and
// log and prints each acknowledgment, SIGKILLs it at a random moment, and
// checks after a reopen that every acknowledged point is there, once.
func TestCrashKill(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	rng := crashRand(t, 1)
	acked := -1
	for iter := range *crashIters {
		last, started := ingesttest.RunAndKill(t, "TestCrashKill", os.Environ(), crashDirEnv, dir, acked+1, rng)
		if last < acked+1 {
			t.Fatalf("iter %d: child acknowledged nothing", iter)
		}
		acked = last
		checkCrashHead(t, dir, acked, started)
	}
}

// crashChild commits batches forever, printing "ack <batch>" after each.
func crashChild(t *testing.T, dir string) {
	start, _ := strconv.Atoi(os.Getenv(ingesttest.CrashStartEnv))
	h, err := OpenHead(vfs.Default, dir, &HeadOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a := h.Appender()
	for b := start; b < start+1_000_000; b++ {
		for s := range crashSeries {
			if _, err := a.AppendKey(ingesttest.SeriesKey(1, 1, uint32(s)), crashPoint(b, s)); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Commit(b%7 == 0); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ack %d\n", b)
	}
}

// checkCrashHead reopens the head and checks batches 0..acked are there,
// nothing beyond started is, and no timestamp appears twice.
func checkCrashHead(t *testing.T, dir string, acked, started int) {
	t.Helper()
	h, err := OpenHead(vfs.Default, dir, &HeadOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if s := h.ReplayStats(); s.BadRecords > 0 || s.OrphanSamples > 0 || s.WAL.CorruptRecords > 0 {
		t.Fatalf("replay after SIGKILL: %+v", s)
	}
	for s := range crashSeries {
		pts := h.AppendPoints(nil, ingesttest.SeriesKey(1, 1, uint32(s)), 0, 1<<62)
		if len(pts) < acked+1 || len(pts) > started+1 {
			t.Fatalf("series %d: %d points, acknowledged %d, started %d", s, len(pts), acked+1, started+1)
		}
		for b, p := range pts {
			if p != crashPoint(b, s) {
				t.Fatalf("series %d point %d: %+v, want %+v", s, b, p, crashPoint(b, s))
			}
		}
	}
}
