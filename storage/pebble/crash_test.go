package pebble

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/storage"
	"go.uber.org/goleak"
)

var crashIters = flag.Int("pebble.crash.iters", 3, "crash/power-loss rounds of the crash tests (20 in the long run)")

// The crash tests write batches through Apply. Each batch writes
// crashRows rows of crashCells cells; every cell names its batch, so a reader
// can tell which batches are complete.
const (
	crashTable = "crash"
	crashRows  = 8
	crashCells = 4
)

var crashSpec = storage.TableSpec{Name: crashTable, Families: []storage.FamilySpec{{Name: "f"}}}

// batchID names one batch: the process run (or round), the writer
// goroutine and its sequence number.
type batchID struct{ run, writer, seq int }

func (b batchID) row(j int) []byte {
	// 0x00 separators exercise the field coding.
	return fmt.Appendf(nil, "%03d\x00%02d\x00%08d\x00%02d", b.run, b.writer, b.seq, j)
}

func (b batchID) value(j, c int) []byte {
	return fmt.Appendf(nil, "%d/%d/%d/%d/%d", b.run, b.writer, b.seq, j, c)
}

// writeBatch writes one batch in one Apply.
func writeBatch(ctx context.Context, tb storage.Table, b batchID) error {
	muts := make([]storage.Mutation, crashRows)
	for j := range muts {
		muts[j].Row = b.row(j)
		for c := 0; c < crashCells; c++ {
			muts[j].Cells = append(muts[j].Cells, storage.Cell{
				Family: "f", Qualifier: []byte{byte(c), 0}, Timestamp: 1000, Value: b.value(j, c),
			})
		}
	}
	return tb.Apply(ctx, muts)
}

// parseRow inverts batchID.row.
func parseRow(row []byte) (batchID, int, error) {
	parts := bytes.Split(row, []byte{0})
	if len(parts) != 4 {
		return batchID{}, 0, fmt.Errorf("row %q: not a crash-test row", row)
	}
	var n [4]int
	for i, p := range parts {
		v, err := strconv.Atoi(string(p))
		if err != nil {
			return batchID{}, 0, fmt.Errorf("row %q: %w", row, err)
		}
		n[i] = v
	}
	return batchID{n[0], n[1], n[2]}, n[3], nil
}

// audit reads a reopened store and returns the batches it holds completely,
// the acknowledged batches it lacks and the batches it holds only in part.
func audit(t testing.TB, db storage.DB, acked map[batchID]bool) (found int, missing, half []batchID) {
	t.Helper()
	ctx := context.Background()
	cells := map[batchID]int{}
	tb, err := db.Table(ctx, crashTable)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("reopened store: %v", err)
	}
	if err == nil {
		sc := tb.Scan(ctx, nil)
		for sc.Next() {
			for _, c := range sc.Row().Cells {
				b, j, err := parseRow(c.Row)
				if err != nil {
					t.Fatal(err)
				}
				if want := b.value(j, int(c.Qualifier[0])); !bytes.Equal(c.Value, want) {
					t.Fatalf("batch %+v row %d: value %q, want %q", b, j, c.Value, want)
				}
				cells[b]++
			}
		}
		if err := sc.Close(); err != nil {
			t.Fatalf("scan of reopened store: %v", err)
		}
	}
	for b, n := range cells {
		if n != crashRows*crashCells {
			half = append(half, b)
		}
	}
	for b := range acked {
		if cells[b] == 0 {
			missing = append(missing, b)
		}
	}
	return len(cells) - len(half), missing, half
}

// checkBatches fails the test unless every acknowledged batch is complete
// and no batch is half-visible; it returns how many batches it found.
func checkBatches(t testing.TB, db storage.DB, acked map[batchID]bool) int {
	t.Helper()
	found, missing, half := audit(t, db, acked)
	if len(missing) > 0 || len(half) > 0 {
		t.Fatalf("%d acknowledged batches missing (e.g. %v), %d half-visible (e.g. %v)",
			len(missing), first(missing), len(half), first(half))
	}
	return found
}

func first(b []batchID) any {
	if len(b) == 0 {
		return "none"
	}
	return b[0]
}

// TestMain lets the test binary act as the crash test's child writer, and
// otherwise checks that no test leaves a goroutine behind (every store's
// collector and pebble's own goroutines stop in Close).
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

const crashChildEnv = "TSD_PEBBLE_CRASH_CHILD_DIR"

// crashChild opens the store in dir and writes batches from several
// goroutines until it is killed, printing "ack run writer seq" after each
// Apply returns.
func crashChild(dir string) {
	run, _ := strconv.Atoi(os.Getenv("TSD_PEBBLE_CRASH_RUN"))
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	db, err := Open(dir, &Options{GCInterval: -1, MemTableSize: 1 << 20})
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	if err := db.EnsureTable(ctx, crashSpec); err != nil {
		fail(err)
	}
	tb, err := db.Table(ctx, crashTable)
	if err != nil {
		fail(err)
	}
	var mu sync.Mutex
	fmt.Println("ready")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				b := batchID{run, w, seq}
				if err := writeBatch(ctx, tb, b); err != nil {
					fail(err)
				}
				mu.Lock()
				fmt.Printf("ack %d %d %d\n", b.run, b.writer, b.seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// parseAck reads one "ack run writer seq" line.
func parseAck(line string) (batchID, bool) {
	var b batchID
	n, err := fmt.Sscanf(line, "ack %d %d %d", &b.run, &b.writer, &b.seq)
	return b, err == nil && n == 3 && !strings.ContainsRune(line, '\x00')
}
