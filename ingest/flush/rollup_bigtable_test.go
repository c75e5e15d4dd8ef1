//go:build !race

// Not built under -race: the Bigtable client and emulator would add a large
// compile to the race step; this test runs in the plain go test step.

package flush

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/storage/bigtable"
)

// TestRollupModelBigtable is TestRollupModel on the Bigtable engine over
// an in-process emulator: the same cells, through the other engine's
// writes, deletes and reads.
func TestRollupModelBigtable(t *testing.T) {
	runRollupModel(t, openBigtableStore, min(modelRounds(), bigtableRounds))
}

// bigtableRounds bounds the rounds of the model and rebuild tests on the
// emulator: the same cases as on Pebble, fewer of them (each round is a
// few emulator round trips per row; Pebble's variants run the full count,
// and the engine-specific paths show in the first rounds).
const bigtableRounds = 12

// openBigtableStore opens a store on the Bigtable engine over an
// in-process emulator of its own (the file system is not used).
func openBigtableStore(t *testing.T, _ vfs.FS) *ingesttest.Store {
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	t.Cleanup(srv.Close)
	db, err := bigtable.Open(context.Background(), bigtable.Options{
		Project: "proj", Instance: "inst", EmulatorHost: srv.Addr, AttemptTimeout: 5 * time.Second,
	})
	return ingesttest.NewStore(t, db, err)
}
