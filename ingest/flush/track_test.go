package flush

import (
	"context"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// TestFlushTracking: with a Tracker, each flushed row adds its points to
// its series' TSMeta counter and its latest arrival, once per row: a late
// point flushed later adds one more, and Stats counts the rows.
func TestFlushTracking(t *testing.T) {
	arrival := int64(t0 + 3*head.RowSpan)
	s, h := openAtArrival(t, &arrival)
	keys := ingesttest.Keys(3)
	appendPoints := func(key []byte, ts ...int64) {
		a := h.Appender()
		for _, tm := range ts {
			if _, err := a.AppendKey(key, series.IntPoint(tm, 1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	appendPoints(keys[0], t0, t0+1000, t0+2000)                   // 3 points, hour 0
	appendPoints(keys[1], t0, t0+head.RowSpan, t0+head.RowSpan+5) // 1 + 2 points, hours 0 and 1
	ts, err := tsmeta.New(s.Meta)
	if err != nil {
		t.Fatal(err)
	}
	fo := flushOpts(s)
	fo.Tracker = tsmeta.NewTracker(ts, tsmeta.TrackCount, fo.WriterID)
	f, err := NewFlusher(h, fo)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.Flush(ctx, time.UnixMilli(arrival), true); err != nil {
		t.Fatal(err)
	}
	// A late point for hour 0 of series 0, flushed as a second column.
	arrival += 60_000
	appendPoints(keys[0], t0+3000)
	if _, err := f.Flush(ctx, time.UnixMilli(arrival), true); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ total, last int64 }{{4, arrival / 1000}, {3, (arrival - 60_000) / 1000}, {0, 0}} {
		m, err := ts.Get(ctx, keys[i])
		if err != nil || m.TotalDatapoints != want.total || m.LastReceived != want.last {
			t.Errorf("series %d: total %d last %d (%v), want %d %d", i, m.TotalDatapoints, m.LastReceived, err, want.total, want.last)
		}
		if want.total > 0 && m.Created != (t0+3*head.RowSpan)/1000 {
			t.Errorf("series %d: created %d, want the first flushed arrival %d", i, m.Created, (t0+3*head.RowSpan)/1000)
		}
	}
	if st := f.Stats(); st.Tracked != 4 || st.TrackErrors != 0 {
		t.Errorf("stats: tracked %d rows, %d errors; want 4 rows", st.Tracked, st.TrackErrors)
	}
}
