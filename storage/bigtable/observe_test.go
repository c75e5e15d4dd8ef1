package bigtable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// TestObserveRequest: every RPC attempt against the emulator, a good one
// or a failed one, is given to Options.ObserveRequest with its duration,
// and a failed one is counted in RPCStats.
func TestObserveRequest(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Duration
	observed := func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), seen...)
	}
	var rpcs rpcCounter
	emu := startEmulator(t, "127.0.0.1:0", rpcs.option())
	db := openAt(t, emu.Addr, func(o *Options) {
		o.MaxAttempts, o.AttemptTimeout = 1, time.Second // the failed put waits one attempt
		o.ObserveRequest = func(d time.Duration) {
			mu.Lock()
			seen = append(seen, d)
			mu.Unlock()
		}
	})
	tbl := mustTable(t, db, oneFamily("t", "f", 1, 0))
	ctx := context.Background()

	before, mutates := len(observed()), rpcs.count("MutateRow")
	if err := tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if got, sent := len(observed())-before, rpcs.count("MutateRow")-mutates; got != 1 || sent != 1 {
		t.Errorf("a put observed %d requests and sent %d MutateRow, want 1 and 1", got, sent)
	}
	before = len(observed())
	if _, err := tbl.Get(ctx, []byte("r"), nil); err != nil {
		t.Fatal(err)
	}
	if got := len(observed()) - before; got != 1 {
		t.Errorf("a get observed %d requests, want 1", got)
	}
	for i, d := range observed() {
		if d <= 0 || d > time.Minute {
			t.Errorf("request %d observed as %v", i, d)
		}
	}
	errs := db.RPCStats().Errors // EnsureTable's lookup of a missing table is one

	emu.Close()
	before = len(observed())
	if err := tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("w")}}); err == nil {
		t.Fatal("a put to a stopped emulator succeeded")
	}
	if got := len(observed()) - before; got != 1 {
		t.Errorf("a failed put observed %d requests, want 1", got)
	}
	if e := db.RPCStats().Errors - errs; e != 1 {
		t.Errorf("RPCStats().Errors grew by %d with one failed attempt, want 1", e)
	}
}
