package ingesttest

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// CrashStartEnv tells a crash child the batch it starts at.
	CrashStartEnv = "TSD_INGEST_CRASH_START"
	// CrashSeries is how many series a crash child writes per batch.
	CrashSeries = 10
)

// CrashRand returns a crash test's random source, seeded by seed (its
// package's -ingest.crash.seed) or the clock when it is 0, and logs the
// seed so a failing run can be repeated.
func CrashRand(t *testing.T, seed uint64, iters int, stream uint64) *rand.Rand {
	t.Helper()
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-ingest.crash.seed), %d rounds (-ingest.crash.iters)", seed, iters)
	return rand.New(rand.NewPCG(seed, stream))
}

// RunAndKill starts this test binary's test as a child, with the
// environment env (the test's, os.Environ) plus dirEnv=dir and the batch
// start; the child prints "ack <batch>" after each acknowledged batch.
// RunAndKill SIGKILLs it after a few acknowledgments and returns the last
// acknowledged batch and the last batch the child may have begun.
func RunAndKill(t *testing.T, test string, env []string, dirEnv, dir string, start int, rng *rand.Rand) (last, started int) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(env, dirEnv+"="+dir, CrashStartEnv+"="+strconv.Itoa(start))
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
