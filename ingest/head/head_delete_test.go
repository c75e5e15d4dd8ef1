package head

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// openRows counts the open rows of every series.
func openRows(h *Head) int {
	n := 0
	h.series.forEach(func(s *memSeries) {
		s.mu.Lock()
		n += len(s.rows)
		s.mu.Unlock()
	})
	return n
}

// TestHeadDeleteRange deletes a range of some series (whole rows and part
// of rows, chunk and out-of-order points), writes new points into the
// deleted range, and checks the head against the model after each step,
// after a clean reopen and after a crash (the delete record is synced):
// deleted points never come back, later ones are kept.
func TestHeadDeleteRange(t *testing.T) {
	fs := vfs.NewCrashableMem()
	h := mustOpenHead(t, fs, testOpts(nil))
	m := ingesttest.Model{}
	keys := ingesttest.Keys(10)
	appendRandom(t, h, rand.New(rand.NewPCG(5, 5)), keys, 20_000, m)
	memBefore := h.MemoryBytes()
	// From the middle of the first hour to the end of the second: a partial
	// row, then a whole one.
	mint, maxt := int64(t0+1_000_000), int64(t0+2*RowSpan-1)
	victims := append(keys[:4:4], ingesttest.SeriesKey(9, 9, 9)) // one unknown series
	strs := make([]string, len(victims))
	for i, k := range victims {
		strs[i] = string(k)
	}
	if err := h.DeleteRange(context.Background(), strs, mint, maxt); err != nil {
		t.Fatal(err)
	}
	m.DeleteRange(victims, mint, maxt)
	delete(m, string(ingesttest.SeriesKey(9, 9, 9)))
	m.Check(t, h)
	if got := h.AppendPoints(nil, keys[0], mint, maxt+1); len(got) != 0 {
		t.Fatalf("%d points left in the deleted range", len(got))
	}
	if h.MemoryBytes() >= memBefore {
		t.Fatalf("memory %d not below %d after the delete", h.MemoryBytes(), memBefore)
	}
	if rows, entries := openRows(h), h.hours.len(); rows != entries {
		t.Fatalf("%d open rows but %d hour entries", rows, entries)
	}
	// Points written after the delete, at deleted timestamps, stay.
	a := h.Appender()
	for i := range 50 {
		p := series.IntPoint(mint+int64(i)*60_000, int64(1000+i))
		a.AppendKey(keys[1], p)
		m.Add(keys[1], p)
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	m.Check(t, h)
	crash := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []vfs.FS{fs, crash} {
		h2 := mustOpenHead(t, f, testOpts(nil))
		m.Check(t, h2)
		if s := h2.ReplayStats(); s.BadRecords != 0 || len(s.WAL.Damaged) != 0 {
			t.Fatalf("replay %+v", s)
		}
		h2.Close()
	}
}
