//go:build !race

// Not built under -race: the Bigtable client and emulator would add a large
// compile to the race step; this test runs in the plain go test step.

package uid

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tsd-db/tsd/storage/bigtable"
)

// TestResolveBatchTwoDaemonsBigtable is TestResolveBatchTwoDaemons on the
// Bigtable engine over its in-process emulator.
func TestResolveBatchTwoDaemonsBigtable(t *testing.T) {
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
	t.Cleanup(func() { db.Close() })
	n := *raceNames
	if n == 0 {
		n = 1500 // every call is an RPC to the emulator
	}
	testBatchTwoDaemons(t, db, n)
}
