package bigtable

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/storage"
)

// TestCloseLeavesNoGoroutines checks that Close stops everything Open and
// the calls started: the clients, the emulator connection and scanners.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := startEmulator(t, "127.0.0.1:0")
	defer srv.Close()
	db, err := Open(context.Background(), Options{Project: "p", Instance: "i", EmulatorHost: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.EnsureTable(ctx, oneFamily("t", "f", 1, 0)); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	s := tbl.Scan(ctx, nil)
	s.Next() // abandoned mid-scan, then closed
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
}
