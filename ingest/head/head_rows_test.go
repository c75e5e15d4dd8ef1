package head

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// TestRowFingerprints pins what readers key decoded head rows by: a row's
// fingerprint stays while its points do, and changes with every point
// added, replaced or deleted, in order or not, while the row is being
// written and after it is put back; a written row is gone, and a new row
// of its hour with as many points has a fingerprint of its own.
func TestRowFingerprints(t *testing.T) {
	h := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer h.Close()
	key := ingesttest.SeriesKey(1, 1, 1)
	commit := func(ps ...series.Point) {
		t.Helper()
		a := h.Appender()
		for _, p := range ps {
			if _, err := a.AppendKey(key, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	fp := func() uint64 {
		t.Helper()
		rows := h.AppendRows(nil, key, t0, t0+RowSpan)
		if len(rows) != 1 || rows[0].Base != t0 {
			t.Fatalf("rows %v, want one at %d", rows, t0)
		}
		return rows[0].FP
	}
	seen := map[uint64]string{}
	check := func(what string) {
		t.Helper()
		f := fp()
		if f != fp() {
			t.Fatalf("%s: the fingerprint moved without a write", what)
		}
		if prev, dup := seen[f]; dup {
			t.Fatalf("%s: fingerprint %x already seen after %s", what, f, prev)
		}
		seen[f] = what
		ingesttest.CheckRows(t, h, key)
	}
	step := func(what string, ps ...series.Point) {
		t.Helper()
		commit(ps...)
		check(what)
	}
	step("first points", series.IntPoint(t0, 1), series.IntPoint(t0+10_000, 2))
	step("in order", series.IntPoint(t0+20_000, 3))
	step("out of order", series.IntPoint(t0+5_000, 9))
	step("replaced in the buffer", series.IntPoint(t0+5_000, 8))
	step("replaced in the chunk", series.Float64Point(t0+10_000, 2.5))
	var big []series.Point
	for i := range oooMax + 1 { // merges the buffer into a new chunk
		big = append(big, series.IntPoint(t0+1+int64(i), int64(i)))
	}
	step("buffer merged", big...)
	if err := h.DeleteRange(context.Background(), []string{string(key)}, t0+1, t0+1); err != nil {
		t.Fatal(err)
	}
	check("one point deleted")

	// Detached for a flush, the row reads as it did; a write meanwhile
	// joins it, and putting it back merges the two.
	before := fp()
	d := detachOne(t, h)
	if fp() != before {
		t.Fatal("detaching the row moved its fingerprint")
	}
	step("written while detached", series.IntPoint(t0+30_000, 4))
	h.Reinstate(&d, true)
	check("put back")

	// The same points again in a row of their own after a flush.
	pts, _, _ := h.AppendRowPoints(nil, key, t0)
	writeAll(t, h)
	commit(pts...)
	check("rewritten after a flush")

	commit(series.IntPoint(t0+RowSpan+1, 1), series.IntPoint(t0-RowSpan, 1))
	rows := h.AppendRows(nil, key, 0, 1<<62)
	if len(rows) != 3 || rows[0].Base != t0-RowSpan || rows[2].Base != t0+RowSpan {
		t.Fatalf("rows %v, want three hours around %d", rows, t0)
	}
	if got := h.AppendRows(nil, key, t0+RowSpan-1, t0+RowSpan); len(got) != 1 || got[0].Base != t0 {
		t.Fatalf("rows overlapping the last millisecond of the hour: %v", got)
	}

	writeAll(t, h)
	if pts, _, ok := h.AppendRowPoints(nil, key, t0); ok || len(pts) != 0 {
		t.Fatalf("a written row still reads from the head: ok=%v, %d points", ok, len(pts))
	}
	if rows := h.AppendRows(nil, key, 0, 1<<62); len(rows) != 0 {
		t.Fatalf("rows after the flush: %v", rows)
	}
}

// detachOne detaches the head's one row for a flush.
func detachOne(t *testing.T, h *Head) DetachedRow {
	t.Helper()
	es := h.TakeHours(nil, func(int64) bool { return true })
	if len(es) != 1 {
		t.Fatalf("%d hour entries, want 1", len(es))
	}
	d, ok := h.DetachRow(es[0], func(string, int64, int64) bool { return true })
	if !ok {
		t.Fatal("row not detached")
	}
	return d
}
