package flush

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// TestRollupFutureRestart: points dated ahead of the daemon's clock are
// flushed early at shutdown (their hour is not over); after a restart the
// compactor folds that row once its hour is over, then more points of the
// same hour arrive and are flushed as a complete hour. The new process
// never saw the stored points, so the 1h and 1d cells must come from the
// stored row, not from the head alone.
func TestRollupFutureRestart(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			r := newRollupRig(t)
			p := r.pipeline(t, format)
			key := ingesttest.Keys(1)[0]
			h := t0 + 5*hour // five hours ahead of the clock
			m := ingesttest.Model{}
			p.commitTo(m, key, series.IntPoint(h+1000, 5), series.IntPoint(h+2000, 7))
			p.flush(true)   // shutdown: the hour is written early, queued
			p.compact(true) // its entry stays: the hour is not over
			p.c.Stop()
			if err := p.h.Close(); err != nil {
				t.Fatal(err)
			}
			p = r.pipeline(t, format) // same clock
			defer p.h.Close()
			p.clock = h + 2*hour
			p.compact(false) // the hour is over: folded, its entry gone
			p.commitTo(m, key, series.IntPoint(h+3000, 100))
			p.clock += 2 * hour
			p.flush(false)
			checkRollups(t, p.f.roll, m, [][]byte{key}, h, h+hour)
		})
	}
}

// TestRollupFutureWindow: a series whose points run more than 64 hours
// ahead of a late point's hour; the head's memory of flushed rows no
// longer covers that hour, so the late point's row must be read back.
func TestRollupFutureWindow(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			r := newRollupRig(t)
			p := r.pipeline(t, format)
			defer p.h.Close()
			key := ingesttest.Keys(1)[0]
			m := ingesttest.Model{}
			p.commitTo(m, key, series.IntPoint(t0+1000, 5), series.IntPoint(t0+2000, 7))
			p.clock = t0 + 2*hour
			p.flush(false)
			p.commitTo(m, key, series.IntPoint(t0+70*hour, 1)) // a fast client clock
			p.flush(true)                                      // written early (memory pressure, or a full flush)
			p.commitTo(m, key, series.IntPoint(t0+3000, 100))  // late for hour t0
			p.clock += hour
			p.flush(false)
			checkRollups(t, p.f.roll, m, [][]byte{key}, t0, t0+hour)
		})
	}
}

// TestFlushTopFile: the bound survives a reopen, only grows, and a
// damaged file leaves it unknown (no head row trusted).
func TestFlushTopFile(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("wal", 0o755); err != nil {
		t.Fatal(err)
	}
	top, err := openFlushTop(fs, "wal")
	if err != nil {
		t.Fatal(err)
	}
	if got := top.floor(t0); got != t0 {
		t.Fatalf("floor without a file: %d, want %d", got, t0)
	}
	if err := top.raise(t0 + 5*hour); err != nil {
		t.Fatal(err)
	}
	if err := top.raise(t0 + hour); err != nil { // never lowered
		t.Fatal(err)
	}
	if top, err = openFlushTop(fs, "wal"); err != nil {
		t.Fatal(err)
	}
	if got := top.floor(t0); got != t0+5*hour {
		t.Fatalf("floor after reopen: %d, want %d", got, t0+5*hour)
	}
	if got := top.floor(t0 + 9*hour); got != t0+9*hour {
		t.Fatalf("floor after reopen, later clock: %d, want %d", got, t0+9*hour)
	}
	f, err := fs.OpenReadWrite("wal/"+topFileName, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, 7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if top, err = openFlushTop(fs, "wal"); err != nil {
		t.Fatal(err)
	}
	if got := top.floor(t0); got != 1<<63-1 {
		t.Fatalf("floor of a damaged file: %d, want none trusted", got)
	}
}
