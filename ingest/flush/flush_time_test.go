package flush

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// TestLatestArrivalWinsAcrossWriters: two daemons (two heads with their
// own writer ids and logs over one table) write the same timestamp; the
// value that arrived last is what readers get, whichever head flushes
// last, because a column is stamped with its row's latest arrival.
func TestLatestArrivalWinsAcrossWriters(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			key := ingesttest.SeriesKey(1, 1, 2)
			heads, flushers := make([]*head.Head, 2), make([]*Flusher, 2)
			for i := range heads {
				if err := fs.MkdirAll("wal"+string(rune('a'+i)), 0o755); err != nil {
					t.Fatal(err)
				}
				h, err := head.OpenHead(fs, "wal"+string(rune('a'+i)), headOpts())
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				opts := flushOpts(s)
				opts.WriterID, opts.Format = uint32(10-i), format // the older writer has the higher id
				if flushers[i], err = NewFlusher(h, opts); err != nil {
					t.Fatal(err)
				}
				heads[i] = h
			}
			for i, h := range heads {
				a := h.Appender()
				if _, err := a.AppendKey(key, series.IntPoint(t0+5_000, int64(i+1))); err != nil {
					t.Fatal(err)
				}
				if err := a.Commit(true); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Millisecond) // arrivals in distinct milliseconds
			}
			// The later writer flushes first, the earlier one last.
			for _, i := range []int{1, 0} {
				time.Sleep(3 * time.Millisecond) // flushes in distinct milliseconds
				if _, err := flushers[i].Flush(context.Background(), time.Now(), true); err != nil {
					t.Fatal(err)
				}
			}
			pts, _ := s.Points(t, key, t0)
			if len(pts) != 1 || pts[0].Int() != 2 {
				t.Fatalf("read %v, want the later arrival's value 2", pts)
			}
		})
	}
}
