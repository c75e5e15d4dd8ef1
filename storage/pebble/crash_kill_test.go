package pebble

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrashSIGKILL runs a child process that writes batches and prints each
// acknowledged one, kills it with SIGKILL at a random moment, reopens the
// store and checks that every acknowledged batch is complete and that no
// batch is half-visible. The child of each round reopens the store the
// previous one was killed in, so recovery is exercised round after round.
// The first round also checks that a store held by another process is
// refused with an error naming its LOCK file.
func TestCrashSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d rounds (-pebble.crash.iters)", seed, *crashIters)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	dir := t.TempDir()
	acked := map[batchID]bool{}
	for run := 0; run < *crashIters; run++ {
		delay := time.Duration(50+rng.IntN(450)) * time.Millisecond
		n := runAndKill(t, dir, run, delay, acked)
		db, err := Open(dir, &Options{GCInterval: -1})
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", run, err)
		}
		found := checkBatches(t, db, acked)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: killed after %v, %d acks this round, %d batches on disk, %d acknowledged in all",
			run, delay, n, found, len(acked))
	}
}

// runAndKill starts a child writer on dir, kills it delay after it is ready,
// adds the batches it acknowledged to acked and returns their number.
func runAndKill(t *testing.T, dir string, run int, delay time.Duration, acked map[batchID]bool) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, "TSD_PEBBLE_CRASH_RUN="+strconv.Itoa(run))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var acks []batchID
	var wg sync.WaitGroup
	wg.Go(func() { acks = readAcks(out, ready) })
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("child writer did not start")
	}
	if run == 0 {
		checkLockedByChild(t, dir)
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child writer exited by itself (%v) before it was killed", err)
	}
	for _, b := range acks {
		acked[b] = true
	}
	return len(acks)
}

// readAcks collects complete "ack" lines until EOF; a line cut by the kill
// has no newline and does not count.
func readAcks(r io.Reader, ready chan<- struct{}) []batchID {
	var acks []batchID
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return acks
		}
		if line == "ready\n" {
			close(ready)
		} else if b, ok := parseAck(line); ok {
			acks = append(acks, b)
		}
	}
}

// checkLockedByChild opens the store the child holds and expects a refusal
// naming the LOCK file.
func checkLockedByChild(t *testing.T, dir string) {
	t.Helper()
	db, err := Open(dir, nil)
	if err == nil {
		db.Close()
		t.Fatal("opened a store held by another process")
	}
	if lock := filepath.Join(dir, "LOCK"); !strings.Contains(err.Error(), lock) {
		t.Fatalf("open of a locked store: %v; want the error to name %s", err, lock)
	}
}
