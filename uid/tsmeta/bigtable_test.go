//go:build !race

package tsmeta

import (
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tsd-db/tsd/storage/bigtable"
)

// TestStoreBigtable runs the store's contract on the Bigtable engine
// (its in-process emulator).
func TestStoreBigtable(t *testing.T) {
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(srv.Close)
	db, err := bigtable.Open(ctx, bigtable.Options{
		Project: "proj", Instance: "inst", EmulatorHost: srv.Addr, AttemptTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testStore(t, openStore(t, db))
}
