package pebble_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/storage/pebble/diskfull"
)

// testMinFree is the free-space minimum of the disk tests.
const testMinFree = 64 << 20

// logSink collects log lines for assertions.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// openDisk opens a store on the simulated disk d, checking free space
// every few milliseconds.
func openDisk(t testing.TB, d *diskfull.FS, logs *logSink) (*pebble.DB, error) {
	t.Helper()
	return pebble.Open("/data", &pebble.Options{
		FS: d, MinFreeBytes: testMinFree, FreeCheckInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), GCInterval: -1,
	})
}

func diskRow(i int) []byte { return fmt.Appendf(nil, "row\x00%04d", i) }

func putRow(tb storage.Table, i int) error {
	return tb.Put(ctx, diskRow(i), []storage.Cell{{Family: "f", Qualifier: []byte("q"), Timestamp: 1000,
		Value: fmt.Appendf(nil, "v%d", i)}})
}

// readRows returns the indexes of rows 0..n-1 the table holds.
func readRows(t testing.TB, tb storage.Table, n int) []int {
	t.Helper()
	var got []int
	for i := range n {
		cells, err := tb.Get(ctx, diskRow(i), nil)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("get row %d: %v", i, err)
		}
		if string(cells[0].Value) != fmt.Sprintf("v%d", i) {
			t.Fatalf("row %d holds %q", i, cells[0].Value)
		}
		got = append(got, i)
	}
	return got
}

// eventually polls cond for up to 10 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestDiskFullCommitRefusedNoPanic fills the disk behind the free-space
// watch's back (its figure stays roomy, as when another process fills the
// disk between two checks): pebble's log write fails with ENOSPC, which
// pebble reports through Fatalf. The store must not panic: the write fails
// as read-only naming the full disk, later writes are refused, reads go
// on, every write acknowledged before survives, and once space is back the
// store reopens pebble and takes writes again without a restart.
func TestDiskFullCommitRefusedNoPanic(t *testing.T) {
	mem := vfs.NewMem()
	disk := diskfull.New(mem)
	logs := &logSink{}
	db, err := openDisk(t, disk, logs)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb := mustTable(t, db, spec)
	const acked = 50
	for i := range acked {
		if err := putRow(tb, i); err != nil {
			t.Fatal(err)
		}
	}
	disk.SetBudget(0)
	err = putRow(tb, acked)
	if !errors.Is(err, storage.ErrReadOnly) || !storage.IsRetryable(err) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("put on a full disk = %v, want a retryable read-only error naming the full disk", err)
	}
	if disk.Refused() == 0 {
		t.Fatal("the disk refused no write: the test did not fill it")
	}
	if err := putRow(tb, acked+1); !errors.Is(err, storage.ErrReadOnly) {
		t.Fatalf("second put on a full disk = %v, want read-only", err)
	}
	if st := db.SpaceStats(); !st.ReadOnly || st.DiskFull == 0 || st.Refused == 0 {
		t.Errorf("stats on a full disk = %+v", st)
	}
	eventually(t, "pebble reopened read-only", func() bool { return db.SpaceStats().Reopens > 0 })
	if got := readRows(t, tb, acked+2); len(got) != acked {
		t.Fatalf("rows readable on a full disk: %v, want the %d acknowledged", got, acked)
	}

	disk.Free()
	eventually(t, "writes resume", func() bool { return putRow(tb, acked+2) == nil })
	if st := db.SpaceStats(); st.ReadOnly {
		t.Errorf("stats after space came back = %+v", st)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	db, err = openDisk(t, disk, logs)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	tb, _ = db.Table(ctx, spec.Name)
	got := readRows(t, tb, acked+3)
	want := append(seq(acked), acked+2)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows after a restart: %v, want %v (acknowledged only)", got, want)
	}
	if strings.Contains(logs.String(), "panic") {
		t.Errorf("log mentions a panic:\n%s", logs)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestDiskLowRefusesThenResumes: with free space under the minimum the
// store refuses writes before pebble can meet a full disk, naming the
// figures; reads go on; it warns at most once a minute however long it
// refuses; and it takes writes again by itself once space is back (with
// the eighth of headroom that keeps it from flipping at the limit).
func TestDiskLowRefusesThenResumes(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	logs := &logSink{}
	db, err := openDisk(t, disk, logs)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb := mustTable(t, db, spec)
	if err := putRow(tb, 0); err != nil {
		t.Fatal(err)
	}
	disk.SetAvail(testMinFree - 1)
	eventually(t, "writes refused", func() bool { return db.WriteErr() != nil })
	err = putRow(tb, 1)
	if !errors.Is(err, storage.ErrReadOnly) || !strings.Contains(err.Error(), "under min_free_bytes 64 MiB") {
		t.Fatalf("put with free space under the minimum = %v", err)
	}
	if disk.Refused() != 0 {
		t.Errorf("the disk refused %d writes: the store let one reach a full disk", disk.Refused())
	}
	if got := readRows(t, tb, 2); fmt.Sprint(got) != "[0]" {
		t.Fatalf("rows readable while refusing: %v", got)
	}
	st := db.SpaceStats()
	if !st.ReadOnly || st.FreeBytes != testMinFree-1 || st.MinFreeBytes != testMinFree || st.Refused != 1 {
		t.Errorf("stats while refusing = %+v", st)
	}
	time.Sleep(50 * time.Millisecond) // ten checks: one warning
	if n := strings.Count(logs.String(), "store refusing writes"); n != 1 {
		t.Errorf("%d refusal warnings in 10 checks, want 1 (one a minute):\n%s", n, logs)
	}

	disk.SetAvail(testMinFree + testMinFree/16) // over the minimum, under the headroom
	time.Sleep(20 * time.Millisecond)
	if db.WriteErr() == nil {
		t.Fatal("writes resumed within the headroom")
	}
	disk.SetAvail(testMinFree + testMinFree/8)
	eventually(t, "writes resume", func() bool { return db.WriteErr() == nil })
	if err := putRow(tb, 1); err != nil {
		t.Fatalf("put after space came back: %v", err)
	}
	if !strings.Contains(logs.String(), "store takes writes again") {
		t.Errorf("no line when writes resumed:\n%s", logs)
	}
}

// TestDiskFullOpenReadOnly opens a store whose disk is full, with a log to
// replay: a read-write open would replay it into an sstable and wait for
// that flush forever. The store opens read-only instead, serves what was
// acknowledged, refuses writes naming the disk, and opens read-write by
// itself once space is back.
func TestDiskFullOpenReadOnly(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	logs := &logSink{}
	db, err := openDisk(t, disk, logs)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, db, spec)
	for i := range 10 {
		if err := putRow(tb, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil { // the rows stay in pebble's log
		t.Fatal(err)
	}
	disk.Fill(1 << 20)
	opened := make(chan error, 1)
	go func() {
		var err error
		db, err = openDisk(t, disk, logs)
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("open on a full disk: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("open on a full disk did not return within 20s")
	}
	defer db.Close()
	tb, _ = db.Table(ctx, spec.Name)
	if got := readRows(t, tb, 11); len(got) != 10 {
		t.Fatalf("rows readable on a full disk: %v", got)
	}
	if err := putRow(tb, 10); !errors.Is(err, storage.ErrReadOnly) || !strings.Contains(err.Error(), "1 MiB free") {
		t.Fatalf("put on a full disk = %v, want read-only naming the free space", err)
	}
	disk.Free()
	eventually(t, "writes resume", func() bool { return putRow(tb, 10) == nil })
	if got := readRows(t, tb, 11); len(got) != 11 {
		t.Fatalf("rows after space came back: %v", got)
	}
}

// TestDiskFullNewStoreRefused: a store that does not exist cannot be
// created on a full disk; the error says why.
func TestDiskFullNewStoreRefused(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	disk.Fill(0)
	_, err := openDisk(t, disk, &logSink{})
	if !errors.Is(err, storage.ErrReadOnly) || !strings.Contains(err.Error(), "under min_free_bytes") {
		t.Fatalf("open a new store on a full disk = %v", err)
	}
}

// TestDiskFullScannerDuringReopen: a scan open when pebble is reopened ends
// with a retryable error (it does not keep the old opening open forever),
// and a new scan after the reopen reads everything.
func TestDiskFullScannerDuringReopen(t *testing.T) {
	disk := diskfull.New(vfs.NewMem())
	db, err := openDisk(t, disk, &logSink{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb := mustTable(t, db, spec)
	const rows = 2000
	for i := range rows {
		if err := putRow(tb, i); err != nil {
			t.Fatal(err)
		}
	}
	sc := tb.Scan(ctx, nil)
	if !sc.Next() {
		t.Fatalf("scan: %v", sc.Err())
	}
	disk.SetBudget(0)
	if err := putRow(tb, rows); !errors.Is(err, storage.ErrReadOnly) {
		t.Fatalf("put on a full disk = %v", err)
	}
	n := 1
	for sc.Next() { // slowly, so the reopen comes while the scan is open
		n++
		time.Sleep(time.Millisecond)
	}
	if err := sc.Err(); !storage.IsRetryable(err) || n == rows {
		t.Errorf("scan across a reopen ended with %v after %d rows, want a retryable error before %d", err, n, rows)
	}
	sc.Close()
	eventually(t, "pebble reopened", func() bool { return db.SpaceStats().Reopens > 0 })
	eventually(t, "reads after the reopen", func() bool {
		n := 0
		sc := tb.Scan(ctx, nil)
		for sc.Next() {
			n++
		}
		return sc.Close() == nil && n == rows
	})
}
