package storagetest

import (
	"flag"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

var (
	steps = flag.Int("storagetest.steps", 0, "model-based test steps (0: the suite's default)")
	seed  = flag.Int64("storagetest.seed", 0, "model-based test seed (0: time-based)")
)

// TestSuiteOnModel runs the suite against the in-memory model served as a
// storage.DB, which proves the suite's expectations agree with the model.
func TestSuiteOnModel(t *testing.T) {
	open := func(t testing.TB) storage.DB {
		db := newMemDB(time.Now)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	Run(t, open, Options{ModelSteps: *steps, ModelSeed: *seed})
}
