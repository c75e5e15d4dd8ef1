package bigtable

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// fastRetries makes a dead server show as a retryable error in about a
// second instead of minutes.
func fastRetries(o *Options) {
	o.MaxAttempts = 3
	o.AttemptTimeout = 150 * time.Millisecond
	o.BackoffBase = 10 * time.Millisecond
	o.BackoffMax = 50 * time.Millisecond
	o.ScanChunkRows = 5
}

func wantRetryable(t *testing.T, what string, err error) {
	t.Helper()
	if !storage.IsRetryable(err) {
		t.Fatalf("%s with the server down = %v; want a retryable error", what, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, storage.ErrInvalidArgument) || errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("%s: retryable error also carries another class: %v", what, err)
	}
}

// TestServerDownIsRetryable stops the emulator in the middle of a scan:
// every kind of call then fails with a retryable error, none hangs past its
// attempts, and once a server listens at the same address again the same
// DB works without being reopened.
func TestServerDownIsRetryable(t *testing.T) {
	ctx := context.Background()
	srv := startEmulator(t, "127.0.0.1:0")
	addr := srv.Addr
	db := openAt(t, addr, fastRetries)
	spec := oneFamily("tsdb", "t", 0, 0)
	tbl := mustTable(t, db, spec)
	var muts []storage.Mutation
	for i := 0; i < 20; i++ {
		muts = append(muts, storage.Mutation{Row: []byte(fmt.Sprintf("r%02d", i)), Cells: []storage.Cell{{Family: "t", Value: []byte("v")}}})
	}
	if err := tbl.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}

	sc := tbl.Scan(ctx, nil)
	for i := 0; i < 5; i++ { // the first chunk, already fetched
		if !sc.Next() {
			t.Fatalf("scan before the stop: %v", sc.Err())
		}
	}
	srv.Close()
	start := time.Now()
	for sc.Next() {
	}
	wantRetryable(t, "scan continuing", sc.Close())

	cell := []storage.Cell{{Family: "t", Qualifier: []byte("q"), Value: []byte("v")}}
	wantRetryable(t, "Put", tbl.Put(ctx, []byte("r"), cell))
	wantRetryable(t, "Apply", tbl.Apply(ctx, muts[:3]))
	_, err := tbl.Get(ctx, []byte("r00"), nil)
	wantRetryable(t, "Get", err)
	_, err = tbl.Increment(ctx, []byte("c"), "t", nil, 1)
	wantRetryable(t, "Increment", err)
	wantRetryable(t, "CheckAndPut", tbl.CheckAndPut(ctx, []byte("r"), "t", []byte("x"), nil, cell))
	wantRetryable(t, "DeleteRange", tbl.DeleteRange(ctx, []byte("r"), []byte("s")))
	wantRetryable(t, "EnsureTable", db.EnsureTable(ctx, spec))
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("failing calls took %v: retries are not bounded", d)
	}

	// A caller's deadline is the caller's, not a retryable failure.
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = tbl.Put(dctx, []byte("r"), cell)
	if !errors.Is(err, context.DeadlineExceeded) || storage.IsRetryable(err) {
		t.Fatalf("Put past the caller's deadline = %v; want context.DeadlineExceeded, not retryable", err)
	}

	// The emulator keeps no data across restarts, so the table is created
	// again; the point is that the same DB reconnects.
	startEmulator(t, addr)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err = db.EnsureTable(ctx, spec)
		if err == nil || time.Now().After(deadline) || !storage.IsRetryable(err) {
			break
		}
	}
	if err != nil {
		t.Fatalf("EnsureTable after restart: %v", err)
	}
	if err := tbl.Put(ctx, []byte("back"), cell); err != nil {
		t.Fatalf("Put after restart: %v", err)
	}
	cells, err := tbl.Get(ctx, []byte("back"), nil)
	if err != nil || len(cells) != 1 || string(cells[0].Value) != "v" {
		t.Fatalf("Get after restart: %v %v", cells, err)
	}
}
