package flush

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// TestFlushSkipsRoundsWhileNothingDue: backfilled hours are past but their
// rows wait for the grace after their last point. Rounds before the
// earliest due time look at no row, unless a row was opened since; points
// added to listed rows do not wake them; the round at the due time
// flushes every row.
func TestFlushSkipsRoundsWhileNothingDue(t *testing.T) {
	arrival := int64(t0 + 30*head.RowSpan)
	s, h := openAtArrival(t, &arrival)
	keys := ingesttest.Keys(20)
	m := ingesttest.Model{}
	for hour := range int64(3) {
		for i, k := range keys {
			ingesttest.CommitPoint(t, h.Appender(), m, k, series.IntPoint(t0+hour*head.RowSpan+int64(i)*1000, int64(i)))
		}
	}
	f, err := NewFlusher(h, flushOpts(s)) // grace 1 min, spread 1 min
	if err != nil {
		t.Fatal(err)
	}
	round := func(after time.Duration, wantExamined, wantRows int64) {
		t.Helper()
		st, err := f.Flush(context.Background(), time.UnixMilli(arrival+after.Milliseconds()), false)
		if err != nil {
			t.Fatal(err)
		}
		if st.Examined != wantExamined || st.Rows != wantRows {
			t.Fatalf("round %v after the last arrival examined %d rows and flushed %d, want %d and %d",
				after, st.Examined, st.Rows, wantExamined, wantRows)
		}
	}
	round(10*time.Second, 60, 0) // the first round looks at every row
	round(20*time.Second, 0, 0)  // nothing can be due yet
	ingesttest.CommitPoint(t, h.Appender(), m, keys[3], series.IntPoint(t0+5*1000+500, 9))
	round(30*time.Second, 0, 0) // a point in a listed row only delays it
	ingesttest.CommitPoint(t, h.Appender(), m, keys[0], series.IntPoint(t0+3*head.RowSpan, 1))
	round(40*time.Second, 61, 0) // a new row: look again
	round(50*time.Second, 0, 0)
	round(2*time.Minute, 61, 61) // past grace and spread: all due
	m.CheckSplit(t, h, s, t0+4*head.RowSpan)
	round(3*time.Minute, 0, 0)
}

// TestFlushQuietSurvivesConcurrentAppends: rounds an hour ahead find
// every row due and flush it, leaving nothing that could come due, while
// appends open rows. A row opened during a round is never left behind by
// the skipped rounds after it: the last round flushes whatever remains.
func TestFlushQuietSurvivesConcurrentAppends(t *testing.T) {
	s, h := openMem(t, headOpts())
	f, err := NewFlusher(h, flushOpts(s))
	if err != nil {
		t.Fatal(err)
	}
	m := ingesttest.Model{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(3, 3))
		for range 300 {
			appendRandom(t, h, rng, ingesttest.Keys(50), 5, m)
		}
	}()
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	var skipped int
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		st, err := f.Flush(context.Background(), ahead(), false)
		if err != nil {
			t.Fatal(err)
		}
		if st.Examined == 0 {
			skipped++
		}
	}
	if _, err := f.Flush(context.Background(), ahead(), false); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rounds skipped", skipped)
	m.CheckSplit(t, h, s, ahead().UnixMilli()) // every point in the store
}

// BenchmarkFlushRoundNothingDue is a round over a backfilled day of 1,000
// series (24,000 open rows) before any is due: "look" takes, checks and
// gives back every entry, as every round did before the flusher kept
// what its last round learned; "skip" is a round that knows.
func BenchmarkFlushRoundNothingDue(b *testing.B) {
	arrival := int64(t0 + 30*head.RowSpan)
	s, h := openAtArrival(b, &arrival)
	keys := ingesttest.Keys(1000)
	a := h.Appender()
	for hour := range int64(24) {
		for i, k := range keys {
			if _, err := a.AppendKey(k, series.IntPoint(t0+hour*head.RowSpan+int64(i), 1)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := a.Commit(false); err != nil {
		b.Fatal(err)
	}
	f, err := NewFlusher(h, flushOpts(s))
	if err != nil {
		b.Fatal(err)
	}
	now := time.UnixMilli(arrival + 10_000)
	for _, look := range []bool{true, false} {
		name := map[bool]string{true: "look", false: "skip"}[look]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if look {
					f.mu.quiet = quiet{}
				}
				st, err := f.Flush(context.Background(), now, false)
				if err != nil || st.Rows != 0 {
					b.Fatalf("flushed %d rows: %v", st.Rows, err)
				}
			}
		})
	}
}
