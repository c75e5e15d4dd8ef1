package head

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// writeAll does what a full flush does to the head, without a store:
// takes every hour, detaches every row and finishes it as written.
func writeAll(t testing.TB, h *Head) {
	t.Helper()
	for _, e := range h.TakeHours(nil, func(int64) bool { return true }) {
		d, ok := h.DetachRow(e, func(string, int64, int64) bool { return true })
		if !ok {
			t.Fatalf("row at %d not detached", e.Base())
		}
		h.FinishRow(&d)
	}
}

// TestFlushSide drives the head's side of a flush by hand: taken hours
// come in flush order, a row that is not due keeps its entry, a detached
// row is still read until it is finished, a reinstated row merges with the
// points that arrived meanwhile (which win) and is late from then on, and
// entries given back are taken again.
func TestFlushSide(t *testing.T) {
	opts := testOpts(nil)
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + RowSpan/2) } // hour 0 is open
	h := mustOpenHead(t, vfs.NewMem(), opts)
	defer h.Close()
	keys := ingesttest.Keys(3)
	m := ingesttest.Model{}
	commit := func(key []byte, p series.Point) {
		t.Helper()
		ingesttest.CommitPoint(t, h.Appender(), m, key, p)
	}
	for i, k := range keys {
		commit(k, series.IntPoint(t0+int64(i), int64(i)))
		commit(k, series.IntPoint(t0+RowSpan+int64(i), int64(i)))
	}
	es := h.TakeHours(nil, func(base int64) bool { return base == t0 })
	if len(es) != 3 || es[0].Base() != t0 || es[2].Base() != t0 {
		t.Fatalf("took %d entries of hour 0", len(es))
	}
	if base, ok := h.OldestHour(); !ok || base != t0+RowSpan {
		t.Fatalf("oldest hour %d %v while hour 0 is taken", base, ok)
	}
	never := func(string, int64, int64) bool { return false }
	always := func(string, int64, int64) bool { return true }
	if _, ok := h.DetachRow(es[0], never); ok {
		t.Fatal("a row that is not due was detached")
	}
	if base, _ := h.OldestHour(); base != t0 {
		t.Fatalf("a row left in the head lost its hour entry: oldest %d", base)
	}
	d, ok := h.DetachRow(es[1], func(key string, base, lastWrite int64) bool {
		return key == string(keys[1]) && base == t0 && lastWrite == t0+RowSpan/2
	})
	if !ok || !bytes.Equal(d.Key(), keys[1]) || d.Base() != t0 || d.LastWrite() != t0+RowSpan/2 || d.Late() {
		t.Fatalf("detached %x at %d, last write %d, late %v", d.Key(), d.Base(), d.LastWrite(), d.Late())
	}
	if got := d.AppendPoints(nil); !slices.Equal(got, m.Points(string(keys[1]), t0, t0+RowSpan)) {
		t.Fatalf("detached row holds %v", got)
	}
	m.Check(t, h) // still read while it is written
	// The rows it holds besides the detached one: hour 1, not hour 0.
	if d.HoldsRowIn(t0, t0+RowSpan) || !d.HoldsRowIn(t0, t0+2*RowSpan) || !d.HoldsRowIn(t0+RowSpan, t0+2*RowSpan) || d.HoldsRowIn(t0+2*RowSpan, t0+30*RowSpan) {
		t.Fatal("HoldsRowIn counts the detached row, or misses hour 1")
	}
	commit(keys[1], series.IntPoint(t0+1, 42)) // overwrites the detached point
	if !d.HoldsRowIn(t0, t0+RowSpan) {
		t.Fatal("HoldsRowIn misses the new row of the detached hour")
	}
	h.Reinstate(&d, true)
	m.Check(t, h)
	h.RestoreEntries(es[2:])
	es = h.TakeHours(es[:0], func(base int64) bool { return base == t0 })
	if len(es) != 3 {
		t.Fatalf("took %d entries of hour 0 again, want 3", len(es))
	}
	for _, e := range es {
		d, ok := h.DetachRow(e, always)
		if !ok {
			t.Fatalf("row at %d not detached", e.Base())
		}
		if late := bytes.Equal(d.Key(), keys[1]); d.Late() != late {
			t.Fatalf("series %x: late %v after a failed write of series %x", d.Key(), d.Late(), keys[1])
		}
		h.FinishRow(&d)
	}
	for _, k := range keys {
		if pts := h.AppendPoints(nil, k, t0, t0+RowSpan); len(pts) != 0 {
			t.Fatalf("series %x: finished rows still read: %v", k, pts)
		}
	}
	writeAll(t, h)
	empty := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer empty.Close()
	for _, k := range keys {
		if _, err := empty.Ref(k); err != nil {
			t.Fatal(err)
		}
	}
	if h.MemoryBytes() != empty.MemoryBytes() || h.NumSeries() != 3 {
		t.Fatalf("memory %d after every row was written, %d for the series alone", h.MemoryBytes(), empty.MemoryBytes())
	}
}
