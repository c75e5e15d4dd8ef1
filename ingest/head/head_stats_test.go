package head

import (
	"math"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

// TestHeadTimeStats: rows and the oldest and newest point times, an
// out-of-order point included; an empty head answers Prometheus's empty
// range (MaxInt64, MinInt64).
func TestHeadTimeStats(t *testing.T) {
	h := mustOpenHead(t, vfs.NewMem(), testOpts(nil))
	defer h.Close()
	if st := h.TimeStats(); st != (TimeStats{MinTime: math.MaxInt64, MaxTime: math.MinInt64}) {
		t.Fatalf("empty head: %+v", st)
	}
	a, b := ingesttest.SeriesKey(1, 1, 1), ingesttest.SeriesKey(1, 1, 2)
	ap := h.Appender()
	ap.AppendKey(a, series.IntPoint(t0+9000, 1))
	ap.AppendKey(a, series.IntPoint(t0+4000, 1)) // out of order: the row's first
	ap.AppendKey(b, series.IntPoint(t0+6000, 1))
	ap.AppendKey(b, series.IntPoint(t0+RowSpan+7000, 1))
	ap.AppendKey(a, series.IntPoint(t0+RowSpan+3000, 1))
	if err := ap.Commit(false); err != nil {
		t.Fatal(err)
	}
	want := TimeStats{Rows: 4, MinTime: t0 + 4000, MaxTime: t0 + RowSpan + 7000}
	if st := h.TimeStats(); st != want {
		t.Errorf("TimeStats = %+v, want %+v", st, want)
	}
}
