//go:build !race

// Not built under -race: the Bigtable client and emulator would add a large
// compile to .ci/run's race step; this test runs in the plain go test ./... step.

package index

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tsd-db/tsd/storage/bigtable"
)

// openBigtableStore opens the Bigtable engine on an in-process emulator.
func openBigtableStore(t *testing.T) *store {
	t.Helper()
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(srv.Close)
	db, err := bigtable.Open(context.Background(), bigtable.Options{
		Project: "proj", Instance: "inst", EmulatorHost: srv.Addr, AttemptTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return newStore(t, db)
}

// TestBigtable runs the shared-store protocol on the Bigtable engine: two
// Indexes register the same series concurrently, spans merge through cell
// versions, and a reload sees everything.
func TestBigtable(t *testing.T) {
	s := openBigtableStore(t)
	ctx := context.Background()
	a, b := s.open(t, nil), s.open(t, nil)
	keys := make([][]byte, 12)
	for i := range keys {
		keys[i] = s.tsuid(t, "m", fmt.Sprintf("host=h%d", i))
	}
	var wg sync.WaitGroup
	for j, ix := range []*Index{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range keys {
				if _, err := ix.Register(ctx, k, int64(i+j)*hourMs, int64(i+j)*hourMs); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, ix := range []*Index{a, b} {
		if err := ix.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustRefresh(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c := s.open(t, nil)
	if c.Len() != len(keys) {
		t.Fatalf("reload: %d series, want %d", c.Len(), len(keys))
	}
	for i, k := range keys {
		ia, _ := a.Lookup(k)
		ib, _ := b.Lookup(k)
		ic, ok := c.Lookup(k)
		if !ok || ia != ib || ib != ic {
			t.Fatalf("%x: ids %d %d %d", k, ia, ib, ic)
		}
		if got, _ := c.Series(ic); got.First != int64(i)*3600 || got.Last != int64(i+1)*3600 {
			t.Fatalf("series %d: span %+v, want hours %d..%d", i, got, i, i+1)
		}
	}
}
