package head

import (
	"bytes"
	"testing"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

func TestSortSeriesKey(t *testing.T) {
	w := series.DefaultWidths()
	key := ingesttest.SeriesKey(9, 5, 50, 1, 10, 3, 30, 2, 20)
	SortSeriesKey(key, w)
	if want := ingesttest.SeriesKey(9, 1, 10, 2, 20, 3, 30, 5, 50); !bytes.Equal(key, want) {
		t.Fatalf("sorted key %x, want %x", key, want)
	}
	odd := []byte{1, 2, 3, 4}
	SortSeriesKey(odd, w)
	if !bytes.Equal(odd, []byte{1, 2, 3, 4}) {
		t.Fatalf("a malformed key changed: %x", odd)
	}
	if n := testing.AllocsPerRun(100, func() { SortSeriesKey(key, w) }); n != 0 {
		t.Fatalf("%.0f allocations", n)
	}
}
