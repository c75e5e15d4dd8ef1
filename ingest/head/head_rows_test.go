package head

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// TestRowFingerprints pins what readers key decoded head rows by: a row's
// fingerprint stays while its points do, and changes with every point
// added or replaced, in order or not; a written row is gone.
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
	step := func(what string, ps ...series.Point) {
		t.Helper()
		commit(ps...)
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
