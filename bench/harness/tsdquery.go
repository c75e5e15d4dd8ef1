package harness

import (
	"github.com/tsd-db/tsd/uid/tsmeta"

	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/bench/queryset"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/opentsdb"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/uid/index"
)

// tsdLoaded is the int dataset loaded through tsd's write path and
// flushed to the store (the state of a daemon hours after the data
// arrived), with both query engines over it.
type tsdLoaded struct {
	w       *tsdWriter
	data    *promtsdb.Data
	reader  *read.Reader
	otsdb   *opentsdb.Engine
	promQ   *tsdpromql.Queryable
	promEng *promql.Engine
}

// loadTSD loads d into a fresh tsd store once per key.
func loadTSD(e *Env, key string, d *promtsdb.Data) (*tsdLoaded, error) {
	return loadTSDAs(e, key, d, true)
}

// loadTSDHead is loadTSD without the flush: every row stays in the head,
// as it does for the minutes after a bulk load (the flush grace).
func loadTSDHead(e *Env, d *promtsdb.Data) (*tsdLoaded, error) {
	return loadTSDAs(e, "int-head", d, false)
}

func loadTSDAs(e *Env, key string, d *promtsdb.Data, flush bool) (*tsdLoaded, error) {
	return Cached(e, "tsd-loaded-"+key, func() (*tsdLoaded, error) {
		w, err := openTSDWriter(e, d, "tsd-query-"+key, head.HeadOptions{MaxMemory: -1})
		if err != nil {
			return nil, err
		}
		e.OnClose(w.close)
		if err := w.registerAll(d); err != nil {
			return nil, err
		}
		if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
			return nil, err
		}
		if flush {
			err = w.flushAll(d)
		} else {
			err = w.ix.Flush(context.Background())
		}
		if err != nil {
			return nil, err
		}
		return newTSDLoaded(e, w, d)
	})
}

// loader loads the int dataset into tsd one way.
type loader func(e *Env, d *promtsdb.Data) (*tsdLoaded, error)

func stored(e *Env, d *promtsdb.Data) (*tsdLoaded, error) { return loadTSD(e, "int", d) }

// registerAll registers every series in the index in bulk first, as
// `tsd index rebuild` does: a new series registered one at a time costs
// two synced writes, which would dominate loading 100,000 series (the
// query figures measure reads, not series creation).
func (w *tsdWriter) registerAll(d *promtsdb.Data) error {
	regs := make([]index.Registration, 0, 4096)
	for i, k := range w.keys {
		regs = append(regs, index.Registration{TSUID: k, FirstMs: d.Start, LastMs: d.MaxTime()})
		if len(regs) == cap(regs) || i == len(w.keys)-1 {
			if err := w.ix.RegisterMany(context.Background(), regs); err != nil {
				return err
			}
			regs = regs[:0]
		}
	}
	return nil
}

// flushAll writes every head row to the store and drains the compactor.
func (w *tsdWriter) flushAll(d *promtsdb.Data) error {
	ts, err := tsmeta.New(w.meta)
	if err != nil {
		return err
	}
	_, err = w.flushWith(d, &flush.FlushOptions{Table: w.data, Meta: w.meta, WriterID: 1, RowsPerSecond: -1,
		Tracker: tsmeta.NewTracker(ts, w.track, 1)})
	return err
}

// flushWith flushes every head row of d with a flusher of opts, drains
// its compactor and flushes the series index; it returns the flusher.
func (w *tsdWriter) flushWith(d *promtsdb.Data, opts *flush.FlushOptions) (*flush.Flusher, error) {
	ctx := context.Background()
	f, err := flush.NewFlusher(w.h, opts)
	if err != nil {
		return nil, err
	}
	if _, err := f.Flush(ctx, time.UnixMilli(d.MaxTime()).Add(24*time.Hour), true); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	c, err := f.NewCompactor(nil)
	if err != nil {
		return nil, err
	}
	if _, err := c.Drain(ctx); err != nil {
		return nil, fmt.Errorf("drain: %w", err)
	}
	return f, w.ix.Flush(ctx)
}

func newTSDLoaded(e *Env, w *tsdWriter, d *promtsdb.Data) (*tsdLoaded, error) {
	l := &tsdLoaded{w: w, data: d}
	var err error
	if l.reader, err = read.New(&read.Options{Data: w.data, Layout: rowkey.DefaultLayout(), Head: w.h, RowCacheBytes: e.RowCacheBytes}); err != nil {
		return nil, err
	}
	if l.otsdb, err = opentsdb.New(&opentsdb.Options{Reader: l.reader, UIDs: w.u, Index: w.ix}); err != nil {
		return nil, err
	}
	if l.promQ, err = tsdpromql.New(&tsdpromql.Options{Reader: l.reader, Index: w.ix, UIDs: w.u}); err != nil {
		return nil, err
	}
	l.promEng = tsdpromql.NewEngine(tsdpromql.EngineOptions{})
	return l, nil
}

// medianMs runs f QueryRepeats times and returns the median in ms.
func medianMs(e *Env, f func() error) (float64, error) {
	ds := make([]float64, 0, e.Size.QueryRepeats)
	for range max(e.Size.QueryRepeats, 1) {
		d, err := e.Time(f)
		if err != nil {
			return 0, err
		}
		ds = append(ds, float64(d)/float64(time.Millisecond))
	}
	slices.Sort(ds)
	return Median(ds), nil
}

// tsdPromQuery times PromQL query i on tsd's Queryable, as promQuery does
// on Prometheus's block, the rows loaded as load leaves them.
func tsdPromQuery(i int, load loader) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		l, err := load(e, d)
		if err != nil {
			return 0, err
		}
		// Marked as api/promapi marks every query it runs, so the range
		// functions are pushed down into tsd's Queryable where that is exact.
		expr, err := parser.ParseExpr(promQueries[i].Expr)
		if err != nil {
			return 0, err
		}
		ctx := tsdpromql.WithPushdown(context.Background(), l.promQ, expr)
		return medianMs(e, func() error {
			_, n, err := promtsdb.Run(ctx, l.promEng, l.promQ, promQueries[i], d.MaxTime())
			if err == nil && n == 0 {
				err = fmt.Errorf("%s: empty result", promQueries[i].Expr)
			}
			return err
		})
	}
}

// tsdOpenTSDBQuery times the named query of bench/queryset through the
// OpenTSDB engine in process: parse, execute and write the response JSON.
func tsdOpenTSDBQuery(name string, load loader) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		l, err := load(e, d)
		if err != nil {
			return 0, err
		}
		q, err := queryset.ByName(name)
		if err != nil {
			return 0, err
		}
		body := q.OpenTSDBBody(time.UnixMilli(d.MaxTime()))
		want := 1
		if q.OpenTSDB[0].Filters[0].GroupBy {
			want = e.Size.Hosts // grouped by host
		}
		return medianMs(e, func() error { return runOpenTSDB(l.otsdb, body, want) })
	}
}

// runOpenTSDB parses, executes and writes the response of an /api/query
// body, and checks that it has want result groups.
func runOpenTSDB(eng *opentsdb.Engine, body []byte, want int) error {
	tq, err := tsquery.ParsePOST(body)
	if err != nil {
		return err
	}
	res, err := eng.Execute(context.Background(), tq)
	if err != nil {
		return err
	}
	defer res.Release()
	if len(res.Groups) != want {
		return fmt.Errorf("%d result groups, want %d", len(res.Groups), want)
	}
	if buf := res.AppendJSON(nil, opentsdb.JSONOptions{}); len(buf) < 10 {
		return fmt.Errorf("empty result %s", buf)
	}
	return nil
}

// highCardData is one metric on Size.HighCardHosts hosts for one hour.
func highCardData(e *Env) (*promtsdb.Data, error) {
	return Cached(e, "prom-data-highcard", func() (*promtsdb.Data, error) {
		return promtsdb.Generate(gen.Config{Hosts: e.Size.HighCardHosts, Span: time.Hour, Shape: gen.ShapeHighCard})
	})
}

// highCardQuery times bench/queryset's highcard-10 (a filter selecting 10
// of the metric's series) through the OpenTSDB engine with the planner's
// choice (auto) or forced to scan the whole metric (scan).
func highCardQuery(plan read.Plan) Measure {
	return func(e *Env) (float64, error) {
		d, err := highCardData(e)
		if err != nil {
			return 0, err
		}
		l, err := loadTSD(e, "highcard", d)
		if err != nil {
			return 0, err
		}
		r, err := read.New(&read.Options{Data: l.w.data, Layout: rowkey.DefaultLayout(), Head: l.w.h, Plan: plan, RowCacheBytes: e.RowCacheBytes})
		if err != nil {
			return 0, err
		}
		eng, err := opentsdb.New(&opentsdb.Options{Reader: r, UIDs: l.w.u, Index: l.w.ix})
		if err != nil {
			return 0, err
		}
		q, err := queryset.ByName("highcard-10")
		if err != nil {
			return 0, err
		}
		body := q.OpenTSDBBody(time.UnixMilli(d.MaxTime()))
		return medianMs(e, func() error { return runOpenTSDB(eng, body, 10) })
	}
}
