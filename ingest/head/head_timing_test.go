//go:build !race

// Not built under -race: Prometheus's tsdb, which these peer benchmarks
// link, would double .ci/run's race compile. They run in the plain
// go test ./... step (and benchmarks never run under -race).

package head

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/series"
)

// devopsPoints is the bench devops dataset (100 hosts x 10 metrics, 10 s)
// already resolved: a series index per point and the points, in the
// generator's order (time, host, metric).
type devopsPoints struct {
	span   int64 // covered time, a whole number of hours
	idx    []int32
	pts    []series.Point
	keys   [][]byte        // by series index: fake UIDs, as uid would resolve them
	labels []labels.Labels // by series index, for Prometheus
}

func loadDevops(b *testing.B, hours int) *devopsPoints {
	g, err := gen.New(gen.Config{Hosts: 100, Span: hourDuration(hours)})
	if err != nil {
		b.Fatal(err)
	}
	d := &devopsPoints{span: int64(hours) * RowSpan}
	nm := len(g.Metrics())
	for h := range g.Hosts() {
		for m := range nm {
			d.keys = append(d.keys, devopsKey(m, h))
			d.labels = append(d.labels, devopsLabels(g, m, h))
		}
	}
	var p gen.Point
	for g.Next(&p) {
		d.idx = append(d.idx, int32(p.Host*nm+p.Metric))
		d.pts = append(d.pts, p.Series())
	}
	return d
}

// devopsKey builds the series key uid would: metric UID, then ten tag
// pairs in tagk UID order.
func devopsKey(metric, host int) []byte {
	tags := []uint32{}
	for k := range 10 {
		v := uint32(1 + k) // a few values per tag key, as the generator draws
		if k == 0 {
			v = uint32(100 + host) // hostname
		} else {
			v = uint32(1000*k + host%(k+2))
		}
		tags = append(tags, uint32(1+k), v)
	}
	return ingesttest.SeriesKey(uint32(1+metric), tags...)
}

func devopsLabels(g *gen.Gen, metric, host int) labels.Labels {
	kv := []string{"__name__", g.Metrics()[metric].Name}
	for k, v := range g.Hosts()[host].Tags {
		kv = append(kv, gen.TagKeys[k], v)
	}
	return labels.FromStrings(kv...)
}

// BenchmarkAppendDevops appends the devops points through the head and its
// log (tsd) and through Prometheus's head appender with its WAL on, both
// with series references cached and a commit every 1,000 points, in one
// run. One op is one point.
func BenchmarkAppendDevops(b *testing.B) {
	d := loadDevops(b, 6)
	b.Run("tsd", func(b *testing.B) { benchTSD(b, d) })
	b.Run("prometheus", func(b *testing.B) { benchPrometheus(b, d) })
}

func benchTSD(b *testing.B, d *devopsPoints) {
	opts := &HeadOptions{Logger: slog.New(slog.DiscardHandler)}
	h, err := OpenHead(vfs.Default, b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	refs := make([]SeriesRef, len(d.keys))
	for i, k := range d.keys {
		if refs[i], err = h.Ref(k); err != nil {
			b.Fatal(err)
		}
	}
	a := h.Appender()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := range b.N {
		j := i % len(d.pts)
		p := d.pts[j]
		p.T += int64(i/len(d.pts)) * d.span
		if err := a.Append(refs[d.idx[j]], p); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := a.Commit(false); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := a.Commit(false); err != nil {
		b.Fatal(err)
	}
	reportRates(b, cputime.Process()-cpu)
}

func benchPrometheus(b *testing.B, d *devopsPoints) {
	h := openPromHead(b)
	defer h.Close()
	var err error
	ctx := context.Background()
	refs := make([]storage.SeriesRef, len(d.labels))
	app := h.Appender(ctx)
	for i, l := range d.labels {
		if refs[i], err = app.Append(0, l, d.pts[0].T-1, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		b.Fatal(err)
	}
	app = h.Appender(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := range b.N {
		j := i % len(d.pts)
		p := d.pts[j]
		s := d.idx[j]
		if _, err := app.Append(refs[s], d.labels[s], p.T+int64(i/len(d.pts))*d.span, p.Float()); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := app.Commit(); err != nil {
				b.Fatal(err)
			}
			app = h.Appender(ctx)
		}
	}
	if err := app.Commit(); err != nil {
		b.Fatal(err)
	}
	reportRates(b, cputime.Process()-cpu)
}

func hourDuration(h int) time.Duration { return time.Duration(h) * time.Hour }

// reportRates reports points per second of wall time and CPU nanoseconds
// per point (the process's user and system time, background goroutines
// included).
func reportRates(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/point")
}

// openPromHead opens Prometheus's head with its WAL on (uncompressed) in a
// temporary directory, for the caller to close: the peer of every append
// benchmark here.
func openPromHead(b *testing.B) *tsdb.Head {
	dir := b.TempDir()
	logger := slog.New(slog.DiscardHandler)
	w, err := wlog.NewSize(logger, nil, dir+"/wal", wlog.DefaultSegmentSize, compression.None)
	if err != nil {
		b.Fatal(err)
	}
	opts := tsdb.DefaultHeadOptions()
	opts.ChunkDirRoot = dir
	h, err := tsdb.NewHead(nil, logger, w, nil, opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Init(math.MinInt64); err != nil {
		h.Close()
		b.Fatal(err)
	}
	return h
}
