//go:build !race

// Not built under -race, as rollup_bigtable_test.go.

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

// TestRebuildRollupsBigtable is TestRebuildRollups on the Bigtable engine
// over an in-process emulator (one per store).
func TestRebuildRollupsBigtable(t *testing.T) {
	runRebuild(t, func(t *testing.T, _ vfs.FS) *ingesttest.Store {
		srv, err := bttest.NewServer("127.0.0.1:0")
		if err != nil {
			t.Fatalf("start emulator: %v", err)
		}
		t.Cleanup(srv.Close)
		db, err := bigtable.Open(context.Background(), bigtable.Options{
			Project: "proj", Instance: "inst", EmulatorHost: srv.Addr, AttemptTimeout: 5 * time.Second,
		})
		return ingesttest.NewStore(t, db, err)
	})
}
