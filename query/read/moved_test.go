package read_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// readSeries reads every series of sel over [start, end] with an Iterator.
func readSeries(t *testing.T, r *read.Reader, sel []index.Series, start, end int64) [][]series.Point {
	t.Helper()
	out := make([][]series.Point, len(sel))
	for i, x := range sel {
		it := r.Iterator(context.Background(), x, start, end, nil)
		for it.Next() {
			out[i] = append(out[i], it.At())
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
	}
	return out
}

// TestRowMovedKeepsDecodedRows: the head rows a reader decoded are its
// cached stored rows once flushed, with their points (integers, floats and
// a row of both), so the first read after the flush decodes nothing; a row
// that holds a second column misses and is decoded. Without the hand-over
// every flushed row is decoded again.
func TestRowMovedKeepsDecodedRows(t *testing.T) {
	for _, hand := range []bool{true, false} {
		s := openStack(t)
		m := model{}
		for ts := t0; ts < t0+2*hourMs; ts += 10_000 {
			m.put(s, t, "ints", series.IntPoint(ts, ts/10_000%97))
			m.put(s, t, "floats", series.Float64Point(ts, float64(ts%1000)/8+0.1))
			if ts%20_000 == 0 {
				m.put(s, t, "mixed", series.IntPoint(ts, 3))
			} else {
				m.put(s, t, "mixed", series.Float32Point(ts, 2.5))
			}
		}
		// Out of order and replacing points, merged in the head row the
		// reader caches and in the column the flush writes.
		m.put(s, t, "ints", series.IntPoint(t0+5, -3))
		m.put(s, t, "ints", series.IntPoint(t0+20_000, 77))
		m.put(s, t, "floats", series.Float64Point(t0+hourMs+10_000, -0.25))
		m.put(s, t, "floats", series.Point{T: t0 + hourMs + 20_000, Bits: series.StaleNaN, Kind: series.Float64})
		m.put(s, t, "floats", series.Float64Point(t0+hourMs+30_000, math.Copysign(0, -1)))
		r := s.reader(t, read.Options{})
		if hand {
			s.moved.r.Store(r)
		}
		all := s.selection(t, "m")
		rg := [2]int64{t0, t0 + 2*hourMs - 1}
		first := readSeries(t, r, all, rg[0], rg[1]) // the head rows, decoded and cached
		s.flushAll(t)
		before := r.Stats()
		after := readSeries(t, r, all, rg[0], rg[1]) // the stored rows
		st := r.Stats()
		for i, x := range all {
			want := m.want(hostOf(t, s, x), rg[0], rg[1])
			if !slices.Equal(first[i], want) || !slices.Equal(after[i], want) {
				t.Fatalf("hand=%v: series %d: %d then %d points, want %d equal", hand, i, len(first[i]), len(after[i]), len(want))
			}
		}
		rows := int64(2 * len(all))
		switch {
		case hand && (st.Moved != rows || st.CacheMisses != before.CacheMisses || st.CacheHits-before.CacheHits != rows):
			t.Fatalf("handed on: stats %+v after %+v: want %d rows moved and found cached, none missed", st, before, rows)
		case !hand && (st.Moved != 0 || st.CacheMisses-before.CacheMisses != rows):
			t.Fatalf("not handed on: stats %+v after %+v: want every stored row missed", st, before)
		}
		if !hand {
			continue
		}
		// A late point makes a row of two columns: it fingerprints apart
		// from the handed entry and is decoded, with both columns' points.
		host := hostOf(t, s, all[0])
		m.put(s, t, host, series.IntPoint(t0+5, 1234))
		readSeries(t, r, all[:1], rg[0], rg[1]) // the new head row, alone in its hour
		s.flushAll(t)
		before = r.Stats()
		got := readSeries(t, r, all[:1], rg[0], rg[1])
		st = r.Stats()
		if want := m.want(host, rg[0], rg[1]); !slices.Equal(got[0], want) {
			t.Fatalf("after a late point: %d points, want %d", len(got[0]), len(want))
		}
		if st.CacheMisses-before.CacheMisses != 1 {
			t.Fatalf("after a late point: stats %+v after %+v: want the two-column row missed once", st, before)
		}
	}
}

// TestRowMovedSkipsChangedRows: a row that changed after the reader cached
// it is flushed with points the entry lacks; its entry is not handed on,
// and the stored row is decoded with the new point.
func TestRowMovedSkipsChangedRows(t *testing.T) {
	s := openStack(t)
	m := model{}
	for ts := t0; ts < t0+hourMs; ts += 10_000 {
		m.put(s, t, "a", series.IntPoint(ts, ts%7))
		m.put(s, t, "b", series.IntPoint(ts, ts%5))
	}
	r := s.reader(t, read.Options{})
	s.moved.r.Store(r)
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + hourMs - 1}
	readSeries(t, r, all, rg[0], rg[1])
	m.put(s, t, "b", series.IntPoint(t0+10_000, 99)) // replaces a cached point
	s.flushAll(t)
	before := r.Stats()
	got := readSeries(t, r, all, rg[0], rg[1])
	st := r.Stats()
	for i, x := range all {
		if want := m.want(hostOf(t, s, x), rg[0], rg[1]); !slices.Equal(got[i], want) {
			t.Fatalf("series %d: %d points, want %d equal", i, len(got[i]), len(want))
		}
	}
	if st.Moved != 1 || st.CacheMisses-before.CacheMisses != 1 {
		t.Fatalf("stats %+v after %+v: want a's row handed on and b's decoded", st, before)
	}
}
