package ingesttest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/series"
)

// Model is the expected content of a head: per series key, points by time.
type Model map[string]map[int64]series.Point

// Add records p as the latest write of key at p.T.
func (m Model) Add(key []byte, p series.Point) {
	if m[string(key)] == nil {
		m[string(key)] = map[int64]series.Point{}
	}
	m[string(key)][p.T] = p
}

// Points returns the expected points of key in [mint, maxt), sorted.
func (m Model) Points(key string, mint, maxt int64) []series.Point {
	var out []series.Point
	for _, p := range m[key] {
		if p.T >= mint && p.T < maxt {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b series.Point) int { return cmp.Compare(a.T, b.T) })
	return out
}

// Clone returns a copy of m.
func (m Model) Clone() Model {
	c := Model{}
	for k, ps := range m {
		for _, p := range ps {
			c.Add([]byte(k), p)
		}
	}
	return c
}

// DeleteRange removes the points of keys in [mint, maxt] from m.
func (m Model) DeleteRange(keys [][]byte, mint, maxt int64) {
	for _, k := range keys {
		for tm := range m[string(k)] {
			if tm >= mint && tm <= maxt {
				delete(m[string(k)], tm)
			}
		}
	}
}

// Reader is what the checks read of a head (*head.Head).
type Reader interface {
	AppendPoints(dst []series.Point, key []byte, mint, maxt int64) []series.Point
	AppendRows(dst []series.RowRef, key []byte, mint, maxt int64) []series.RowRef
	AppendRowPoints(dst []series.Point, key []byte, base int64) ([]series.Point, uint64, bool)
	AppendRowChunk(dst []byte, key []byte, base int64) ([]byte, uint64, int, bool)
	DecodeRowChunk(dst []series.Point, snap []byte) ([]series.Point, bool)
	NumSeries() int64
}

// Check compares every series of m with the head, whole and in a range,
// and reads each series' rows one at a time (CheckRows).
func (m Model) Check(t testing.TB, h Reader) {
	t.Helper()
	for key := range m {
		for _, r := range [][2]int64{{0, 1 << 62}, {rowBase(1_767_229_000_000) + 1234, 1_767_229_000_000 + 2*hour}} {
			got := h.AppendPoints(nil, []byte(key), r[0], r[1])
			want := m.Points(key, r[0], r[1])
			if !slices.Equal(got, want) {
				t.Fatalf("series %x in [%d, %d): %d points, want %d\n got %v\nwant %v", key, r[0], r[1], len(got), len(want), First(got), First(want))
			}
		}
	}
	if int64(len(m)) != h.NumSeries() {
		t.Fatalf("head has %d series, model %d", h.NumSeries(), len(m))
	}
	for key := range m {
		CheckRows(t, h, []byte(key))
	}
}

// CheckRows reads every row of key one at a time and checks that they
// add up to AppendPoints, that each row's fingerprint is AppendRows', and
// that its snapshot (AppendRowChunk) decodes to its points.
func CheckRows(t testing.TB, h Reader, key []byte) {
	t.Helper()
	var got []series.Point
	rows := h.AppendRows(nil, key, 0, 1<<62)
	for i, r := range rows {
		if r.Base%hour != 0 || i > 0 && r.Base <= rows[i-1].Base {
			t.Fatalf("series %x: row bases %v", key, rows)
		}
		n := len(got)
		var fp uint64
		var ok bool
		got, fp, ok = h.AppendRowPoints(got, key, r.Base)
		if !ok || fp != r.FP {
			t.Fatalf("series %x row %d: ok=%v fingerprint %x, AppendRows gave %x", key, r.Base, ok, fp, r.FP)
		}
		checkSnapshot(t, h, key, r, got[n:])
		if r.Points < len(got)-n {
			t.Fatalf("series %x row %d: Points %d, but %d points read", key, r.Base, r.Points, len(got)-n)
		}
		for _, p := range got[n:] {
			if rowBase(p.T) != r.Base {
				t.Fatalf("series %x row %d holds a point at %d", key, r.Base, p.T)
			}
		}
	}
	if want := h.AppendPoints(nil, key, 0, 1<<62); !slices.Equal(got, want) {
		t.Fatalf("series %x: rows hold %d points, AppendPoints %d", key, len(got), len(want))
	}
}

// First returns the first five points of p, for failure messages.
func First(p []series.Point) []series.Point { return p[:min(len(p), 5)] }

// CheckStore checks that the store holds exactly m's points for every
// series of m in the four hours from T0, and that none of those rows has
// more than maxCols data columns.
func (m Model) CheckStore(t testing.TB, s *Store, maxCols int) {
	t.Helper()
	for key := range m {
		for base := int64(T0); base < T0+4*hour; base += hour {
			want := m.Points(key, base, base+hour)
			got, cols := s.Points(t, []byte(key), base)
			if !slices.Equal(got, want) {
				t.Fatalf("series %x hour %d: %d points in the store, want %d\n got %v\nwant %v", key, (base-T0)/hour, len(got), len(want), First(got), First(want))
			}
			if cols > maxCols {
				t.Fatalf("series %x hour %d: %d columns, want at most %d", key, (base-T0)/hour, cols, maxCols)
			}
		}
	}
}

// CheckSplit checks that every point of m in the four hours from T0 is in
// the store (hours before flushedBefore) or in the head (later hours), and
// nowhere else.
func (m Model) CheckSplit(t testing.TB, h Reader, s *Store, flushedBefore int64) {
	t.Helper()
	for key := range m {
		for base := int64(T0); base < T0+4*hour; base += hour {
			want := m.Points(key, base, base+hour)
			fromStore, _ := s.Points(t, []byte(key), base)
			fromHead := h.AppendPoints(nil, []byte(key), base, base+hour)
			got, other := fromHead, fromStore
			if base < flushedBefore {
				got, other = fromStore, fromHead
			}
			if !slices.Equal(got, want) || len(other) != 0 {
				t.Fatalf("series %x hour %d: %d points where expected, %d elsewhere, want %d", key, (base-T0)/hour, len(got), len(other), len(want))
			}
		}
	}
}

// rowSnapMin is the shortest snapshot: its header.
const rowSnapMin = 12

// checkSnapshot checks that row r's snapshot decodes to pts, its points,
// under r's fingerprint.
func checkSnapshot(t testing.TB, h Reader, key []byte, r series.RowRef, pts []series.Point) {
	t.Helper()
	snap, fp, n, ok := h.AppendRowChunk(nil, key, r.Base)
	if !ok || fp != r.FP || n != len(pts) {
		t.Fatalf("series %x row %d snapshot: ok=%v fingerprint %x (AppendRows %x), %d points (want %d)", key, r.Base, ok, fp, r.FP, n, len(pts))
	}
	dec, ok := h.DecodeRowChunk(nil, snap)
	if !ok || !slices.Equal(dec, pts) {
		t.Fatalf("series %x row %d: snapshot decodes to ok=%v %v, want %v", key, r.Base, ok, dec, pts)
	}
	if _, ok := h.DecodeRowChunk(nil, snap[:rowSnapMin-1]); ok {
		t.Fatalf("series %x row %d: a snapshot without its header decodes", key, r.Base)
	}
}
