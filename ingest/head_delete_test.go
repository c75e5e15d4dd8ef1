package ingest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
)

// deleteModel removes the points of keys in [mint, maxt] from m.
func (m model) deleteRange(keys [][]byte, mint, maxt int64) {
	for _, k := range keys {
		for tm := range m[string(k)] {
			if tm >= mint && tm <= maxt {
				delete(m[string(k)], tm)
			}
		}
	}
}

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
	m := model{}
	keys := testKeys(10)
	appendRandom(t, h, rand.New(rand.NewPCG(5, 5)), keys, 20_000, m)
	memBefore := h.MemoryBytes()
	// From the middle of the first hour to the end of the second: a partial
	// row, then a whole one.
	mint, maxt := int64(t0+1_000_000), int64(t0+2*RowSpan-1)
	victims := append(keys[:4:4], seriesKey(9, 9, 9)) // one unknown series
	strs := make([]string, len(victims))
	for i, k := range victims {
		strs[i] = string(k)
	}
	if err := h.DeleteRange(context.Background(), strs, mint, maxt); err != nil {
		t.Fatal(err)
	}
	m.deleteRange(victims, mint, maxt)
	delete(m, string(seriesKey(9, 9, 9)))
	m.check(t, h)
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
		m.add(keys[1], p)
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	m.check(t, h)
	crash := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []vfs.FS{fs, crash} {
		h2 := mustOpenHead(t, f, testOpts(nil))
		m.check(t, h2)
		if s := h2.ReplayStats(); s.BadRecords != 0 || len(s.WAL.Damaged) != 0 {
			t.Fatalf("replay %+v", s)
		}
		h2.Close()
	}
}

// TestHeadDeleteDuringFlush deletes while a full flush is writing the same
// rows: once DeleteRange returns, no point of the range is left in the
// head, open or being written, so a store delete made after it removes
// every copy.
func TestHeadDeleteDuringFlush(t *testing.T) {
	fs := vfs.NewMem()
	st := openStore(t, fs)
	defer st.db.Close()
	h := mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	keys := testKeys(40)
	appendRandom(t, h, rand.New(rand.NewPCG(8, 8)), keys, 20_000, model{})
	f, err := h.NewFlusher(flushOpts(st))
	if err != nil {
		t.Fatal(err)
	}
	strs := make([]string, len(keys))
	for i, k := range keys {
		strs[i] = string(k)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Flush(context.Background(), time.Now(), true)
		done <- err
	}()
	if err := h.DeleteRange(context.Background(), strs, 0, 1<<62); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if pts := h.AppendPoints(nil, k, 0, 1<<62); len(pts) != 0 {
			t.Fatalf("series %x: %d points left after the delete", k, len(pts))
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
