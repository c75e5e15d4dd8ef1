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
		checkSeries(t, s, it, x, m, rg)
		it.Close()
	}
}

// checkSeries walks it, series x's iterator over rg, and checks it
// against m.
func checkSeries(t *testing.T, s *stack, it *read.SeriesIterator, x index.Series, m model, rg [2]int64) {
	t.Helper()
	var got []series.Point
	for it.Next() {
		got = append(got, it.At())
	}
	want := m.want(hostOf(t, s, x), rg[0], rg[1])
	if it.Err() != nil || !slices.Equal(got, want) {
		t.Fatalf("series %s: %d points (err %v), want %d", hostOf(t, s, x), len(got), it.Err(), len(want))
	}
}

// trustedSplit is loadSplit's stack read by a reader that trusts its
// changes, with every series of "m" and the six hours loadSplit wrote.
func trustedSplit(t *testing.T) (*stack, model, *read.Reader, []index.Series, [2]int64) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{Changes: s.changes})
	return s, m, r, s.selection(t, "m"), [2]int64{t0, t0 + 6*hourMs - 1}
}

// TestTrustedRowsSkipGets: with Options.Changes, rows read before, and
// rows a Get found absent, are answered without a Get while their hours
// are unmarked; the flusher's writes and the head's commits mark theirs,
// so a row flushed into (late points, rows only in the head until then)
// or an hour written again is read afresh, and every answer matches the
// model. A store write nothing marks is not seen until a mark: the
// contract every writer keeps.
func TestTrustedRowsSkipGets(t *testing.T) {
	s, m, r, all, rg := trustedSplit(t)
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

// fetchAll reads the series of sel over rg through Fetch's scan plan and
// checks each against m.
func fetchAll(t *testing.T, s *stack, r *read.Reader, sel []index.Series, m model, rg [2]int64) {
	t.Helper()
	ctx := context.Background()
	f, err := r.Fetch(ctx, read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: read.PlanScan})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	var it *read.SeriesIterator
	for i, x := range sel {
		it = f.Iterator(ctx, i, it)
		checkSeries(t, s, it, x, m, rg)
	}
	it.Close()
}

// TestTrustedHoursSkipScans: with Options.Changes, Fetch's bucket scans
// record each hour they read whole (every row selected and cached, or no
// row at all); while nothing marks an hour, a later fetch of it, of the
// same series or fewer, scans nothing. A scan of a few series records
// nothing, since it did not see the others' rows. A commit, a flush (a
// new series' row, a row in an hour that had none) and a drop of the
// caches each send the next fetch back to the store, and every answer
// matches the model; an unmarked store write is not seen until a mark,
// as with Gets.
func TestTrustedHoursSkipScans(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	s.flushAll(t)
	r := s.reader(t, read.Options{Changes: s.changes})
	all := s.selection(t, "m")
	rg := [2]int64{t0, t0 + 8*hourMs - 1} // hours 6 and 7 have no rows
	scansOf := func(f func()) (scans, trusted int64) {
		before := r.Stats()
		f()
		after := r.Stats()
		return after.Scans - before.Scans, after.Trusted - before.Trusted
	}

	// A few series, fetched again and again, never skip their scans.
	for range 4 {
		fetchAll(t, s, r, all[2:5], m, rg)
	}
	if scans, _ := scansOf(func() { fetchAll(t, s, r, all[2:5], m, rg) }); scans == 0 {
		t.Fatal("a fetch of 3 of 12 series skipped its scans: it recorded hours it did not read whole")
	}
	for range 3 { // a row is cached on its second read, its hour recorded on the third
		fetchAll(t, s, r, all, m, rg)
	}
	scans, trusted := scansOf(func() {
		fetchAll(t, s, r, all, m, rg)
		fetchAll(t, s, r, all[2:5], m, rg)
	})
	if scans != 0 || trusted != (12+3)*6 {
		t.Fatalf("fetches of settled hours: %d scans and %d trusted rows, want none and %d", scans, trusted, (12+3)*6)
	}

	// A commit marks its hour: the next fetch scans it (and reads the
	// head, which has the point).
	p := series.IntPoint(t0+4*hourMs+17, 31337)
	m.put(s, t, hostOf(t, s, all[0]), p)
	if scans, _ := scansOf(func() { fetchAll(t, s, r, all, m, rg) }); scans == 0 {
		t.Fatal("no scan after a commit marked its hour")
	}
	// A new series in a recorded hour, and a row in a recorded empty
	// hour, both flushed: the flush marks their hours.
	m.put(s, t, "h99", series.IntPoint(t0+2*hourMs+5, 7))
	m.put(s, t, hostOf(t, s, all[1]), series.IntPoint(t0+7*hourMs+5, 8))
	s.flushAll(t)
	all = s.selection(t, "m")
	if len(all) != 13 {
		t.Fatalf("%d series, want 13", len(all))
	}
	for range 4 {
		fetchAll(t, s, r, all, m, rg)
	}

	// Dropped caches: the entries are gone, the hours scanned again.
	r.DropCache()
	if scans, _ := scansOf(func() { fetchAll(t, s, r, all, m, rg) }); scans == 0 {
		t.Fatal("no scan after the caches were dropped")
	}

	// An unmarked store write is invisible to a trusted hour until a mark.
	for range 3 {
		fetchAll(t, s, r, all, m, rg)
	}
	rewriteOnePoint(t, s, all[1], m)
	s.changes.Mark(t0, t0+hourMs-1)
	fetchAll(t, s, r, all, m, rg)
}

// TestSeriesRecords: once Iterator has walked every hour of a series, a
// walk over those hours, or fewer, takes each row (stored, absent, or
// the head's under the fingerprint it was read with) from the series'
// record, with no Get. A head commit changes one head row, which is read
// afresh; a flush marks the hours, and the walks go back to the store
// until they have recorded them again. Every answer matches the model.
func TestSeriesRecords(t *testing.T) {
	s, m, r, all, rg := trustedSplit(t)
	counts := func(rg [2]int64) (gets, recorded int64) {
		before := r.Stats()
		iterateAll(t, s, r, all, m, rg)
		after := r.Stats()
		return after.Gets - before.Gets, after.Recorded - before.Recorded
	}
	for range 3 { // rows cached, then trusted, then recorded whole
		counts(rg)
	}
	// 12 series × 6 stored hours (3-5 absent from the store), and the
	// head's rows: hours 1-5 of six series, 3-5 of the others.
	const rows = 12*6 + 6*5 + 6*3
	if gets, rec := counts(rg); gets != 0 || rec != rows {
		t.Fatalf("a walk of recorded series: %d Gets, %d rows from records, want 0 and %d", gets, rec, rows)
	}
	narrow := [2]int64{t0 + hourMs, t0 + 3*hourMs - 1}
	if gets, rec := counts(narrow); gets != 0 || rec != 12*2+6*2 {
		t.Fatalf("hours 1-2: %d Gets, %d rows from records, want 0 and %d", gets, rec, 12*2+6*2)
	}

	// The commit marks hour 4: each series Gets it again and its stored
	// rows come from the trust index, its head rows from the record but
	// the one committed to.
	m.put(s, t, hostOf(t, s, all[0]), series.IntPoint(t0+4*hourMs+1, 777))
	if gets, rec := counts(rg); gets != 12 || rec != 6*5+6*3-1 {
		t.Fatalf("after a commit to one head row: %d Gets, %d rows from records, want 12 and %d", gets, rec, 6*5+6*3-1)
	}

	s.flushAll(t)
	if gets, _ := counts(rg); gets == 0 {
		t.Fatal("no row was read again after the flush marked its hours")
	}
	for range 3 {
		counts(rg)
	}
	if gets, rec := counts(rg); gets != 0 || rec != 12*6 {
		t.Fatalf("after the flush, settled: %d Gets, %d rows from records, want 0 and %d (the head is empty)", gets, rec, 12*6)
	}
}

// TestSeriesRecordsOfScans: a read of many series' head rows before a
// scan records each series' head rows too, and the next such read finds
// them there, one lookup a series; a head commit sends its row back to
// the row cache. Every answer matches the model.
func TestSeriesRecordsOfScans(t *testing.T) {
	s, m, r, all, rg := trustedSplit(t)
	recorded := func() int64 {
		before := r.Stats().Recorded
		fetchAll(t, s, r, all, m, rg)
		return r.Stats().Recorded - before
	}
	recorded() // the head rows cached and recorded
	const heads = 6*5 + 6*3
	if got := recorded(); got != heads {
		t.Fatalf("a second scan: %d head rows from records, want %d", got, heads)
	}
	m.put(s, t, hostOf(t, s, all[0]), series.IntPoint(t0+4*hourMs+1, 777))
	if got := recorded(); got != heads-1 {
		t.Fatalf("after a commit to one head row: %d head rows from records, want %d", got, heads-1)
	}
}

// TestSeriesRecordsJoin: a walk over hours that overlap a series' record
// takes the hours the record holds from it and Gets the others, and
// leaves the two joined: a walk over all of their hours then takes every
// row from the record. TSBS's queries draw their hours at random, so
// records that answered only walks within their own hours rarely
// answered theirs.
func TestSeriesRecordsJoin(t *testing.T) {
	s, m, r, all, _ := trustedSplit(t)
	s.flushAll(t) // stored rows alone: hours 0-5 of every series
	counts := func(rg [2]int64) (gets, recorded int64) {
		before := r.Stats()
		iterateAll(t, s, r, all, m, rg)
		after := r.Stats()
		return after.Gets - before.Gets, after.Recorded - before.Recorded
	}
	early := [2]int64{t0, t0 + 3*hourMs - 1}           // hours 0-2
	late := [2]int64{t0 + 2*hourMs, t0 + 6*hourMs - 1} // hours 2-5
	for range 3 {                                      // rows cached, then trusted, then recorded whole
		counts(early)
	}
	if gets, rec := counts(early); gets != 0 || rec != 12*3 {
		t.Fatalf("hours 0-2 recorded: %d Gets, %d rows from records, want 0 and %d", gets, rec, 12*3)
	}
	if gets, rec := counts(late); gets != 12*3 || rec != 12 {
		t.Fatalf("hours 2-5 first: %d Gets, %d rows from records, want %d (hours 3-5) and %d (hour 2)", gets, rec, 12*3, 12)
	}
	for range 2 {
		counts(late)
	}
	all6 := [2]int64{t0, t0 + 6*hourMs - 1}
	if gets, rec := counts(all6); gets != 0 || rec != 12*6 {
		t.Fatalf("hours 0-5 after both: %d Gets, %d rows from records, want 0 and %d", gets, rec, 12*6)
	}
	// A write to hour 4 marks it: the joined record no longer answers
	// walks over it, and a walk over hours 0-2 still takes them all.
	m.put(s, t, hostOf(t, s, all[0]), series.IntPoint(t0+4*hourMs+1, 777))
	s.flushAll(t)
	if gets, rec := counts(all6); gets == 0 || rec != 0 {
		t.Fatalf("hours 0-5 after a write to hour 4: %d Gets, %d rows from records, want some and 0", gets, rec)
	}
	if gets, rec := counts(early); gets != 0 || rec != 12*3 {
		t.Fatalf("hours 0-2 after a write to hour 4: %d Gets, %d rows from records, want 0 and %d", gets, rec, 12*3)
	}
}
