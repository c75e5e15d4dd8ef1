package pebble_test

import (
	"errors"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/storage/storagetest"
)

// openTemp opens a fresh store on a temp dir and closes it at cleanup,
// accepting a store the test closed itself.
func openTemp(t testing.TB, opts *pebble.Options) *pebble.DB {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	var o storagetest.Options // the suite's 2,000 model steps
	if invariants.RaceEnabled {
		// One goroutine against a model: 5 s of the race step for what
		// the test step checked; the concurrent cases run whole.
		o.ModelSteps = 400
	}
	storagetest.Run(t, func(t testing.TB) storage.DB {
		return openTemp(t, &pebble.Options{CacheSize: 1 << 20, MemTableSize: 1 << 20})
	}, o)
}
