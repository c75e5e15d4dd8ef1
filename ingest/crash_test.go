package ingest

import (
	"bufio"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
)

var (
	crashIters = flag.Int("ingest.crash.iters", 3, "SIGKILL rounds of TestCrashKill (the long run uses 20)")
	crashSeed  = flag.Uint64("ingest.crash.seed", 0, "seed of the crash tests' kill times (0: from the clock); each test logs the one it used")
)

// crashRand returns the crash tests' random source, seeded by
// -ingest.crash.seed or the clock, and logs the seed so a failing run can
// be repeated.
func crashRand(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-ingest.crash.seed), %d rounds (-ingest.crash.iters)", seed, *crashIters)
	return rand.New(rand.NewPCG(seed, stream))
}

const (
	crashDirEnv   = "TSD_INGEST_CRASH_DIR"
	crashStartEnv = "TSD_INGEST_CRASH_START"
	crashSeries   = 10
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
		last, started := runAndKill(t, "TestCrashKill", crashDirEnv, dir, acked+1, rng)
		if last < acked+1 {
			t.Fatalf("iter %d: child acknowledged nothing", iter)
		}
		acked = last
		checkCrashHead(t, dir, acked, started)
	}
}

// runAndKill starts a child at batch start, kills it after a few
// acknowledgments and returns the last acknowledged batch and the last
// batch the child may have begun.
func runAndKill(t *testing.T, test, dirEnv, dir string, start int, rng *rand.Rand) (last, started int) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), dirEnv+"="+dir, crashStartEnv+"="+strconv.Itoa(start))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last, killAt := start-1, start+20+rng.IntN(300)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if b, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			last, _ = strconv.Atoi(b)
		}
		if last >= killAt {
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // land anywhere in the next step
			cmd.Process.Kill()                                           // SIGKILL: no deferred function, no Close
			break
		}
	}
	for sc.Scan() {
		if b, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			last, _ = strconv.Atoi(b)
		}
	}
	cmd.Wait()
	return last, last + 1
}

// crashChild commits batches forever, printing "ack <batch>" after each.
func crashChild(t *testing.T, dir string) {
	start, _ := strconv.Atoi(os.Getenv(crashStartEnv))
	h, err := OpenHead(vfs.Default, dir, &HeadOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a := h.Appender()
	for b := start; b < start+1_000_000; b++ {
		for s := range crashSeries {
			if _, err := a.AppendKey(seriesKey(1, 1, uint32(s)), crashPoint(b, s)); err != nil {
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
		pts := h.AppendPoints(nil, seriesKey(1, 1, uint32(s)), 0, 1<<62)
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
