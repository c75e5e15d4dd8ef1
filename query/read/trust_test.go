package read_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// iterateAll reads every series of sel over rg through Iterator (a
// series' rows by Gets) and checks each against m.
func iterateAll(t *testing.T, s *stack, r *read.Reader, sel []index.Series, m model, rg [2]int64) {
	t.Helper()
	for _, x := range sel {
		it := r.Iterator(context.Background(), x, rg[0], rg[1], nil)
		var got []series.Point
		for it.Next() {
			got = append(got, it.At())
		}
		want := m.want(hostOf(t, s, x), rg[0], rg[1])
		if it.Err() != nil || !slices.Equal(got, want) {
			t.Fatalf("series %s: %d points (err %v), want %d", hostOf(t, s, x), len(got), it.Err(), len(want))
		}
		it.Close()
	}
}

// TestTrustedRowsSkipGets: with Options.Changes, rows read before, and
// rows a Get found absent, are answered without a Get while their hours
// are unmarked; the flusher's writes and the head's commits mark theirs,
// so a row flushed into (late points, rows only in the head until then)
// or an hour written again is read afresh, and every answer matches the
// model. A store write nothing marks is not seen until a mark: the
// contract every writer keeps.
func TestTrustedRowsSkipGets(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{Changes: s.changes})
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 6*hourMs - 1}
	for range 3 { // a row is cached and recorded on its second read, trusted from its third
		iterateAll(t, s, r, all, m, rg)
	}
	before := r.Stats()
	iterateAll(t, s, r, all, m, rg)
	after := r.Stats()
	if after.Gets != before.Gets || after.Trusted <= before.Trusted {
		t.Fatalf("a fourth read: %d Gets and %d trusted rows, want none and more",
			after.Gets-before.Gets, after.Trusted-before.Trusted)
	}

	// Hours 1-2 gain the head's late points as new cells; hours 3-5,
	// absent from the store until now, are written; the head empties.
	s.flushAll(t)
	iterateAll(t, s, r, all, m, rg)
	if r.Stats().Gets == after.Gets {
		t.Fatal("no row was read again after the flush marked its hours")
	}

	// A commit marks its hour: the stored row is read again, head merged.
	host := hostOf(t, s, all[0])
	p := series.IntPoint(t0+30*60_000+1, 424242)
	m.put(s, t, host, p)
	iterateAll(t, s, r, all, m, rg)

	// An unmarked store write is invisible to a trusted row until a mark.
	for range 3 {
		iterateAll(t, s, r, all, m, rg)
	}
	s.flushAll(t)
	rewriteOnePoint(t, s, all[1], m)
	s.changes.Mark(t0, t0+hourMs-1)
	iterateAll(t, s, r, all, m, rg)
}
