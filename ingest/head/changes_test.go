package head

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/series"
)

// TestCommitAndDeleteMarkChanges: a commit marks the hours of its points
// once they are visible, a delete the hours of its range, and neither
// marks hours it did not touch; the PromQL answer cache relies on it
// (internal/changes).
func TestCommitAndDeleteMarkChanges(t *testing.T) {
	tr := new(changes.Tracker)
	opts := testOpts(nil)
	opts.Changes = tr
	h := mustOpenHead(t, vfs.NewMem(), opts)
	key := ingesttest.SeriesKey(1, 1, 1)
	const hour = 3600_000
	far := [2]int64{t0 + 10*hour, t0 + 11*hour}

	g := tr.Gen()
	a := h.Appender()
	for _, ts := range []int64{t0 + 5, t0 + 2*hour + 5} {
		if _, err := a.AppendKey(key, series.Point{T: ts, Kind: series.Int, Bits: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Changed(g, t0, t0+3*hour) {
		t.Fatal("points pending in an appender are marked before their commit")
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	if !tr.Changed(g, t0, t0) || !tr.Changed(g, t0+2*hour, t0+2*hour+10) {
		t.Fatal("a commit did not mark the hours of its points")
	}
	if tr.Changed(g, far[0], far[1]) {
		t.Fatal("a commit marked hours it holds no point of")
	}
	if got := h.AppendPoints(nil, key, t0, t0+3*hour); len(got) != 2 {
		t.Fatalf("%d points visible after the commit, want 2", len(got))
	}

	g = tr.Gen()
	if err := h.DeleteRange(context.Background(), []string{string(key)}, t0+2*hour, t0+3*hour-1); err != nil {
		t.Fatal(err)
	}
	if !tr.Changed(g, t0+2*hour, t0+2*hour) {
		t.Fatal("a delete did not mark its range")
	}
	if tr.Changed(g, t0, t0+hour-1) || tr.Changed(g, far[0], far[1]) {
		t.Fatal("a delete marked hours outside its range")
	}
}
