//go:build !race

package tree

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tsd-db/tsd/storage/bigtable"
)

// TestProcessBigtable runs the store's rows on the Bigtable engine (its
// in-process emulator): the same bytes, the branch read through a row-key
// regex, deletes by column.
func TestProcessBigtable(t *testing.T) {
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
	defer db.Close()
	s, tbl := openStore(t, db)
	testProcess(t, s, tbl)
}
