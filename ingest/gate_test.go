package ingest

import (
	"errors"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

// TestGateReasons: the operator's mode comes first, then the store's
// refusal; both match storage.ErrReadOnly and name their reason; a nil
// gate never refuses.
func TestGateReasons(t *testing.T) {
	var storeErr error
	g := NewGate(GateOptions{Store: func() error { return storeErr }})
	if err := g.Err(); err != nil {
		t.Fatalf("open gate: %v", err)
	}
	storeErr = storage.ReadOnly(errors.New("disk: 1 MiB free in /data, under min_free_bytes 256 MiB"))
	if err := g.Err(); !errors.Is(err, storage.ErrReadOnly) || err.Error() != "read-only: disk: 1 MiB free in /data, under min_free_bytes 256 MiB" {
		t.Fatalf("store refusing: %v", err)
	}
	g.SetMode("tsd.mode=ro")
	if err := g.Err(); !errors.Is(err, storage.ErrReadOnly) || !storage.IsRetryable(err) || err.Error() != "read-only: tsd.mode=ro" {
		t.Fatalf("mode: %v", err)
	}
	g.SetMode("")
	storeErr = nil
	if err := g.Err(); err != nil {
		t.Fatalf("gate opened again: %v", err)
	}
	if err := (*Gate)(nil).Err(); err != nil {
		t.Fatalf("nil gate: %v", err)
	}
}
