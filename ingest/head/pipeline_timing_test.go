//go:build !race

// Not built under -race: Prometheus's tsdb, which these peer benchmarks
// link, would double .ci/run's race compile. They run in the plain
// go test ./... step (and benchmarks never run under -race).

package head

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// devopsNames is the bench devops dataset as the parsers hand it over:
// per series the metric name and tags as bytes (and as Prometheus labels),
// per point its series and value, in the generator's order.
type devopsNames struct {
	span   int64
	metric [][]byte
	tags   [][]uid.Tag
	labels []labels.Labels
	idx    []int32
	pts    []series.Point
}

func loadDevopsNames(tb testing.TB, hosts, hours int) *devopsNames {
	g, err := gen.New(gen.Config{Hosts: hosts, Span: hourDuration(hours)})
	if err != nil {
		tb.Fatal(err)
	}
	d := &devopsNames{span: int64(hours) * RowSpan}
	nm := len(g.Metrics())
	for h := range g.Hosts() {
		for m := range nm {
			d.metric = append(d.metric, []byte(g.Metrics()[m].Name))
			var tags []uid.Tag
			for k, v := range g.Hosts()[h].Tags {
				tags = append(tags, uid.Tag{Key: []byte(gen.TagKeys[k]), Value: []byte(v)})
			}
			d.tags = append(d.tags, tags)
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

// namePipeline is the write path from names on: UID resolution on a real
// UID table (storage/pebble), the series index (uid/index) as the head's
// registrar, the head and its log.
type namePipeline struct {
	tb  testing.TB
	db  *tsdpebble.DB
	u   *uid.UIDs
	ix  *index.Index
	h   *Head
	a   *Appender
	na  *NameAppender
	key []byte
}

func openNamePipeline(tb testing.TB, walOpts func(*HeadOptions)) *namePipeline {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	p := &namePipeline{tb: tb}
	var err error
	if p.db, err = tsdpebble.Open(tb.TempDir(), &tsdpebble.Options{Logger: quiet, GCInterval: -1}); err != nil {
		tb.Fatal(err)
	}
	if err := p.db.EnsureTable(ctx, schema.MetaTableSpec("tsdb-meta")); err != nil {
		tb.Fatal(err)
	}
	meta, _ := p.db.Table(ctx, "tsdb-meta")
	if p.u, err = uid.Open(ctx, p.db, &uid.Options{Logger: quiet}); err != nil {
		tb.Fatal(err)
	}
	if p.ix, err = index.Open(ctx, meta, p.u, &index.Options{RefreshInterval: -1, Logger: quiet}); err != nil {
		tb.Fatal(err)
	}
	opts := &HeadOptions{Registrar: p.ix, Logger: quiet}
	if walOpts != nil {
		walOpts(opts)
	}
	if p.h, err = OpenHead(vfs.Default, tb.TempDir(), opts); err != nil {
		tb.Fatal(err)
	}
	p.a = p.h.Appender()
	p.na = p.h.NameAppender(p.u, 0)
	return p
}

func (p *namePipeline) close() {
	p.h.Close()
	p.ix.Close()
	p.db.Close()
}

// append resolves the names of series s of d and appends pt.
func (p *namePipeline) append(d *devopsNames, s int32, pt series.Point) {
	var err error
	p.key, err = p.u.ResolvePoint(context.Background(), p.key[:0], d.metric[s], d.tags[s])
	if err != nil {
		p.tb.Fatal(err)
	}
	SortSeriesKey(p.key, series.DefaultWidths())
	if _, err := p.a.AppendKey(p.key, pt); err != nil {
		p.tb.Fatal(err)
	}
}

// appendCached appends pt to series s of d through the NameAppender.
func (p *namePipeline) appendCached(d *devopsNames, s int32, pt series.Point) {
	if _, err := p.na.Append(context.Background(), d.metric[s], d.tags[s], pt); err != nil {
		p.tb.Fatal(err)
	}
}

// createSeries resolves every series once (assigning UIDs, registering it
// in the index) with a point just before the data.
func (p *namePipeline) createSeries(d *devopsNames) {
	for s := range d.metric {
		p.append(d, int32(s), series.IntPoint(d.pts[0].T-1, 0))
	}
	if err := p.a.Commit(false); err != nil {
		p.tb.Fatal(err)
	}
}

// BenchmarkIngestNames appends the devops points starting from their names,
// as a parser hands them over: UID resolution (warm caches), the series
// index, the head and its log (tsd), against Prometheus's head appender
// given the same points by label set (no cached references), in one run.
// A commit every 1,000 points. One op is one point.
func BenchmarkIngestNames(b *testing.B) {
	d := loadDevopsNames(b, 100, 6)
	run := func(b *testing.B, cached bool, limits SeriesLimits) {
		p := openNamePipeline(b, func(o *HeadOptions) { o.SeriesLimits = limits })
		defer p.close()
		p.createSeries(d)
		app, commit := p.append, p.a.Commit
		if cached {
			app, commit = p.appendCached, p.na.Commit
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cputime.Process()
		for i := range b.N {
			j := i % len(d.pts)
			pt := d.pts[j]
			pt.T += int64(i/len(d.pts)) * d.span
			app(d, d.idx[j], pt)
			if i%1000 == 999 {
				if err := commit(false); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := commit(false); err != nil {
			b.Fatal(err)
		}
		reportRates(b, cputime.Process()-cpu)
	}
	// tsd-resolve resolves every name of every point (uid.ResolvePoint);
	// tsd-names remembers series by name (NameAppender), as a connection
	// does, resolving only new ones.
	b.Run("tsd-resolve", func(b *testing.B) { run(b, false, SeriesLimits{}) })
	b.Run("tsd-names", func(b *testing.B) { run(b, true, SeriesLimits{}) })
	// tsd-names-limits is tsd-names with every series limit on (and far
	// above the dataset's 1,000 series): the cost of the check on the
	// append path of known series.
	b.Run("tsd-names-limits", func(b *testing.B) {
		run(b, true, SeriesLimits{MaxHourly: 1 << 20, MaxDaily: 1 << 20, MaxPerMetric: 1 << 20})
	})
	b.Run("prometheus", func(b *testing.B) { benchPrometheusLabels(b, d) })
}

func benchPrometheusLabels(b *testing.B, d *devopsNames) {
	h := openPromHead(b)
	defer h.Close()
	ctx := context.Background()
	app := h.Appender(ctx)
	for _, l := range d.labels {
		if _, err := app.Append(0, l, d.pts[0].T-1, 0); err != nil {
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
		if _, err := app.Append(0, d.labels[d.idx[j]], p.T+int64(i/len(d.pts))*d.span, p.Float()); err != nil {
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

// TestIngestNamesAllocs: in steady state a point costs no allocation from
// its names to the log (UID resolution or the name cache, index, head and
// log), and the name cache resolves each series to the same reference as
// UID resolution does.
func TestIngestNamesAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	d := loadDevopsNames(t, 5, 2)
	p := openNamePipeline(t, nil)
	defer p.close()
	p.createSeries(d)
	for s := range d.metric {
		ref, err := p.na.Append(context.Background(), d.metric[s], d.tags[s], series.IntPoint(d.pts[0].T-1, 0))
		p.key, _ = p.u.ResolvePoint(context.Background(), p.key[:0], d.metric[s], d.tags[s])
		SortSeriesKey(p.key, series.DefaultWidths())
		if want, _ := p.h.Ref(p.key); err != nil || ref != want {
			t.Fatalf("series %d: name cache gave ref %d (%v), resolution %d", s, ref, err, want)
		}
	}
	p.na.Commit(false)
	i := 0 // continues across both passes: timestamps only move forward
	for _, cached := range []bool{false, true} {
		run := func() {
			for range 100 {
				j := i % len(d.pts)
				pt := d.pts[j]
				pt.T += int64(i/len(d.pts)) * d.span
				if cached {
					p.appendCached(d, d.idx[j], pt)
				} else {
					p.append(d, d.idx[j], pt)
				}
				i++
			}
			if err := p.a.Commit(false); err != nil {
				t.Fatal(err)
			}
			if err := p.na.Commit(false); err != nil {
				t.Fatal(err)
			}
		}
		// Up to an hour boundary (the first hour sizes the rows): the
		// measured runs then open rows once, in AllocsPerRun's warm-up run,
		// and stay inside the hour.
		for first := true; first || i%(50*360) != 0; first = false {
			run()
		}
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("cached %v: %.1f allocations per 100 points", cached, n)
		}
	}
}
