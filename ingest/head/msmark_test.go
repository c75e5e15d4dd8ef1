package head

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// oldWALDir holds a write-ahead log written by tsd at 196f086, before
// samples-ms records: TestReplayOldLog replays it.
const oldWALDir = "testdata/wal-196f086"

var genOldWAL = flag.Bool("head.gen-old-wal", false, "write "+oldWALDir+" (run at the commit the log must come from)")

// oldLogPoints are the points of oldWALDir, in two series: integers,
// floats, out of order, whole seconds and milliseconds.
func oldLogPoints() (keys [][]byte, pts [][]series.Point) {
	keys = [][]byte{ingesttest.SeriesKey(1, 1, 1), ingesttest.SeriesKey(1, 1, 2)}
	var a, b []series.Point
	for i := range 300 {
		a = append(a, series.IntPoint(t0+int64(i)*1000, int64(i*i)))
		b = append(b, series.Float64Point(t0+int64(i)*333+7, float64(i)/3))
	}
	b = append(b, series.Float32Point(t0-500, 1.5)) // out of order
	return keys, [][]series.Point{a, b}
}

// TestGenOldWAL writes oldWALDir with -head.gen-old-wal; it was run once
// at 196f086 and its output committed.
func TestGenOldWAL(t *testing.T) {
	if !*genOldWAL {
		t.Skip("only with -head.gen-old-wal")
	}
	dir, _ := filepath.Abs(oldWALDir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHead(vfs.Default, dir, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	keys, pts := oldLogPoints()
	a := h.Appender()
	for i, k := range keys {
		for _, p := range pts[i] {
			if _, err := a.AppendKey(k, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReplayOldLog: a log written before samples-ms records existed
// replays whole, every point without the millisecond mark.
func TestReplayOldLog(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(oldWALDir)); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHead(vfs.Default, dir, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	keys, pts := oldLogPoints()
	for i, k := range keys {
		want := slices.Clone(pts[i])
		slices.SortFunc(want, func(a, b series.Point) int { return int(a.T - b.T) })
		got := h.AppendPoints(nil, k, 0, 1<<62)
		if !slices.Equal(got, want) {
			t.Errorf("series %d: %d points replayed, want %d (first %v, want %v)", i, len(got), len(want), got[:min(2, len(got))], want[:2])
		}
	}
	if s := h.ReplayStats(); s.Samples != 601 || s.BadRecords != 0 || len(s.WAL.Damaged) != 0 {
		t.Errorf("replay stats %+v", s)
	}
}

// TestMsMarkThroughHeadAndLog: the millisecond mark of whole-second points
// is kept by the head's chunks (across kind changes and runs of both
// marks) and by the log's samples-ms records at replay; a series written
// without marks beside them replays unmarked.
func TestMsMarkThroughHeadAndLog(t *testing.T) {
	fs := vfs.NewMem()
	h := mustOpenHead(t, fs, testOpts(nil))
	key, plain := ingesttest.SeriesKey(2, 1, 1), ingesttest.SeriesKey(2, 1, 2)
	var want []series.Point
	for i := range 200 {
		p := series.IntPoint(t0+int64(i)*1000, int64(i%7))
		if i%50 >= 20 {
			p = series.Float64Point(p.T, float64(i)/4)
		}
		p.Ms = i%30 < 12 // runs of marked and unmarked points
		want = append(want, p)
	}
	a := h.Appender()
	for _, p := range want {
		if _, err := a.AppendKey(key, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	a = h.Appender()
	if _, err := a.AppendKey(plain, series.IntPoint(t0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got := h.AppendPoints(nil, key, 0, 1<<62); !slices.Equal(got, want) {
		t.Fatalf("head: %v\nwant %v", got[:5], want[:5])
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	if got := h.AppendPoints(nil, key, 0, 1<<62); !slices.Equal(got, want) {
		t.Fatalf("replayed: %v\nwant %v", got[:5], want[:5])
	}
	if got := h.AppendPoints(nil, plain, 0, 1<<62); !slices.Equal(got, []series.Point{series.IntPoint(t0, 1)}) {
		t.Fatalf("plain series replayed: %v", got)
	}
}
