package head

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// BenchmarkNewTagValues: a burst of 5,000 points each naming a new tag
// value (a fleet of new hosts) through one connection's path on the real
// engine (temporary directories, synced UID writes) and committed:
// "serial" resolves each point's names on the spot, one UID assignment
// after another, as NameAppender did before deferring; "batched" is
// NameAppender, which assigns them together. ms/burst is the figure;
// cpu-ms/burst (the process's CPU time) is steadier on a shared machine.
func BenchmarkNewTagValues(b *testing.B) {
	const burst = 5000
	for _, mode := range []string{"serial", "batched"} {
		b.Run(mode, func(b *testing.B) {
			s := openStoreAt(b, vfs.Default, b.TempDir())
			defer s.DB.Close()
			ctx := context.Background()
			u, err := uid.Open(ctx, s.DB, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			h := mustOpenHead(b, vfs.Default, testOpts(nil))
			defer h.Close()
			n, a := h.NameAppender(u, 0), h.Appender()
			var key []byte
			round := 0
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				for i := range burst {
					tags := []uid.Tag{{Key: []byte("host"), Value: fmt.Appendf(nil, "h%d.%d", round, i)}}
					p := series.IntPoint(t0+int64(round), int64(i))
					if mode == "batched" {
						_, err = n.Append(ctx, []byte("sys.cpu.user"), tags, p)
					} else if key, err = u.ResolvePoint(ctx, key[:0], []byte("sys.cpu.user"), tags); err == nil {
						SortSeriesKey(key, h.opts.Widths)
						_, err = a.AppendKey(key, p)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if mode == "batched" {
					err = n.Commit(false)
				} else {
					err = a.Commit(false)
				}
				if err != nil {
					b.Fatal(err)
				}
				round++
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(round), "ms/burst")
			b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(round), "cpu-ms/burst")
		})
	}
}
