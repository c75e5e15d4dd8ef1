package head

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
)

func TestThrottleWithoutFlusher(t *testing.T) {
	opts := testOpts(nil)
	opts.MaxMemory = 4 << 10
	h := mustOpenHead(t, vfs.NewMem(), opts)
	defer h.Close()
	a := h.Appender()
	var err error
	for i := 0; err == nil && i < 100_000; i++ {
		a.AppendKey(ingesttest.SeriesKey(1, 1, uint32(i%50)), series.IntPoint(t0+int64(i), 1))
		err = a.Commit(false)
	}
	if !errors.Is(err, ErrThrottled) || h.MemoryBytes() <= 4<<10 {
		t.Fatalf("a head without a flusher over its limit: %v, memory %d", err, h.MemoryBytes())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 64 << 10: "64 KiB", 2 << 30: "2 GiB", 2254857830: "2.1 GiB", 1536 << 20: "1.5 GiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
