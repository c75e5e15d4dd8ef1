package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// rollupSpan is the span of the rollup figures' dataset: a month, the
// dashboard range rollups are for (two days at the smoke size).
func rollupSpan(e *Env) time.Duration {
	if e.Size.Name == Smoke.Name {
		return 48 * time.Hour
	}
	return 30 * 24 * time.Hour
}

func rollupQueryFigures() []Figure {
	return []Figure{
		{
			Name: "rollups: OpenTSDB 1 metric 100 hosts 30 d, 1h-avg by host, row cache off", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "1h rollup cells (tsdb-rollup-1h)", Measure: rollupQuery(true, false)},
			Peer: Side{Name: "same query, rollupUsage=ROLLUP_RAW", Measure: rollupQuery(false, false)},
		},
		{
			Name: "rollups: OpenTSDB 1 metric 100 hosts 30 d, 1h-avg by host, first query after a restart, row cache on", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "1h rollup cells (tsdb-rollup-1h)", Measure: rollupQuery(true, true)},
			Peer: Side{Name: "same query, rollupUsage=ROLLUP_RAW", Measure: rollupQuery(false, true)},
		},
	}
}

// rollupLoaded is one metric (cpu_usage_user) on Size.Hosts hosts over
// rollupSpan at 10 s, flushed with its rollup cells (the default
// configuration) in tsd's dense format.
type rollupLoaded struct {
	w    *tsdWriter
	data *promtsdb.Data
	ro   *read.Rollups
	// promChecked holds each PromQL figure's check of its answers, made
	// once (rollup_promql.go).
	promMu      sync.Mutex
	promChecked map[string]error
}

func loadRollups(e *Env) (*rollupLoaded, error) {
	return Cached(e, "tsd-rollups", func() (*rollupLoaded, error) {
		d, err := promtsdb.Generate(gen.Config{Hosts: e.Size.Hosts, Span: rollupSpan(e), Shape: gen.ShapeHighCard})
		if err != nil {
			return nil, err
		}
		w, err := openTSDWriter(e, d, "tsd-rollups", head.HeadOptions{MaxMemory: -1})
		if err != nil {
			return nil, err
		}
		e.OnClose(w.close)
		ctx := context.Background()
		// The rollup rows as the daemon on Pebble writes them (a sole
		// writer: packed day rows of 1h cells).
		fo, err := w.enableRollups(ctx)
		if err != nil {
			return nil, err
		}
		cfg := fo.Config
		if err := w.registerAll(d); err != nil {
			return nil, err
		}
		if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
			return nil, err
		}
		f, err := flush.NewFlusher(w.h, &flush.FlushOptions{Table: w.data, Meta: w.meta, WriterID: 1, RowsPerSecond: -1, Rollups: fo})
		if err != nil {
			return nil, err
		}
		if _, err := f.Flush(ctx, time.UnixMilli(d.MaxTime()).Add(24*time.Hour), true); err != nil {
			return nil, fmt.Errorf("flush: %w", err)
		}
		if err := w.ix.Flush(ctx); err != nil {
			return nil, err
		}
		settle(w.db)
		l := &rollupLoaded{w: w, data: d, ro: &read.Rollups{Config: cfg, Tables: fo.Tables}}
		// Both paths must give the same answer before either is timed.
		a, err := l.answer(true)
		if err != nil {
			return nil, err
		}
		b, err := l.answer(false)
		if err != nil {
			return nil, err
		}
		if err := sameBodies(a, b); err != nil {
			return nil, fmt.Errorf("rollup and raw answers differ: %w", err)
		}
		return l, nil
	})
}

// settle compacts the store and waits (up to a minute) until it runs no
// compaction: the state of a store hours after the load, when the
// versions the flush's rollup rewrites left (each hour rewrites its day's
// packed row) are gone, and no compaction shares the process CPU time the
// figures are timed in.
func settle(db storage.DB) {
	if c, ok := db.(interface{ Compact(context.Context) error }); ok {
		_ = c.Compact(context.Background())
	}
	quiesce(db)
}

// quiesce waits (up to a minute) until the store runs no flush or
// compaction and has collected its tables' statistics (a reopened pebble
// reads every table's properties in the background).
func quiesce(db storage.DB) {
	m, ok := db.(interface{ Metrics() *pebble.Metrics })
	if !ok {
		return
	}
	quiet := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && quiet < 10; {
		time.Sleep(100 * time.Millisecond)
		mt := m.Metrics()
		if mt.Compact.NumInProgress == 0 && mt.Flush.NumInProgress == 0 &&
			mt.Table.InitialStatsCollectionComplete && mt.Table.PendingStatsCollectionCount == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// restart closes l's store and opens it again in process, with new UID
// caches and series index, as a daemon restart does: pebble's block and
// table caches start empty, and the next reader's row cache too (the
// operating system's page cache stays warm). The head is kept: it holds
// no unflushed row, so a restarted daemon's replay would give it none.
// It waits until the reopened store runs no flush or compaction, so none
// is timed with the first query.
func (l *rollupLoaded) restart(e *Env) error {
	ctx := context.Background()
	w := l.w
	if err := w.ix.Close(); err != nil {
		return err
	}
	w.ix = nil
	if err := w.db.Close(); err != nil {
		return err
	}
	w.db = nil
	db, err := e.OpenStore(w.storeDir)
	if err != nil {
		return fmt.Errorf("reopen the store: %w", err)
	}
	w.db = db
	if w.data, err = db.Table(ctx, tsdDataTable); err != nil {
		return err
	}
	if w.meta, err = db.Table(ctx, tsdMetaTable); err != nil {
		return err
	}
	for i, t := range l.ro.Tables {
		if t != nil {
			if l.ro.Tables[i], err = db.Table(ctx, t.Spec().Name); err != nil {
				return err
			}
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	if w.u, err = uid.Open(ctx, db, &uid.Options{Logger: quiet}); err != nil {
		return err
	}
	if w.ix, err = index.Open(ctx, w.meta, w.u, &index.Options{RefreshInterval: -1, Logger: quiet}); err != nil {
		return err
	}
	quiesce(db)
	// The closed store's caches are garbage now; a daemon starting afresh
	// has none, so collect them here rather than during the timed query.
	runtime.GC()
	return nil
}

// engine returns an OpenTSDB engine on a new reader of l.
func (l *rollupLoaded) engine(cacheBytes int64) (*opentsdb.Engine, error) {
	r, err := read.New(&read.Options{Data: l.w.data, Layout: rowkey.DefaultLayout(), Head: l.w.h, RowCacheBytes: cacheBytes, Rollups: l.ro})
	if err != nil {
		return nil, err
	}
	return opentsdb.New(&opentsdb.Options{Reader: r, UIDs: l.w.u, Index: l.w.ix})
}

// query is the figure's /api/query body: the whole span, 1h-avg, grouped
// by host, with rollups or ROLLUP_RAW.
func (l *rollupLoaded) query(rollups bool) *tsquery.TSQuery {
	usage := "ROLLUP_RAW"
	if rollups {
		usage = "ROLLUP_NOFALLBACK"
	}
	body := fmt.Sprintf(`{"start":%d,"end":%d,"msResolution":false,"queries":[{"aggregator":"avg","metric":"cpu_usage_user",`+
		`"downsample":"1h-avg","rollupUsage":%q,"filters":[{"type":"wildcard","tagk":"hostname","filter":"*","groupBy":true}]}]}`,
		l.data.Start/1000, l.data.MaxTime()/1000, usage)
	q, err := tsquery.ParsePOST([]byte(body))
	if err != nil {
		panic(err) // a constant query
	}
	return q
}

// answer runs the figure's query on a reader without row cache.
func (l *rollupLoaded) answer(rollups bool) ([]byte, error) {
	eng, err := l.engine(-1)
	if err != nil {
		return nil, err
	}
	return runRollupQuery(eng, l.query(rollups), nil)
}

// runRollupQuery runs q on eng and returns its JSON. The work carries the
// profiler label rollup_query=rollups or raw (tsdbench -cpuprofile; the
// goroutines it starts inherit it), so a profile separates the two sides.
// dst is reused, as the daemon reuses its answer buffers.
func runRollupQuery(eng *opentsdb.Engine, q *tsquery.TSQuery, dst []byte) (out []byte, err error) {
	side := "raw"
	if q.Queries[0].RollupUsage != "ROLLUP_RAW" {
		side = "rollups"
	}
	pprof.Do(context.Background(), pprof.Labels("rollup_query", side), func(ctx context.Context) {
		var res *opentsdb.Result
		if res, err = eng.Execute(ctx, q); err != nil {
			return
		}
		defer res.Release()
		out = res.AppendJSON(dst[:0], opentsdb.JSONOptions{})
	})
	return out, err
}

// sameBodies compares two answers: equal bytes, or the same series and
// timestamps with values within 1e-9 relative.
func sameBodies(a, b []byte) error {
	if bytes.Equal(a, b) {
		return nil
	}
	type out struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	var x, y []out
	if err := json.Unmarshal(a, &x); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err
	}
	if len(x) != len(y) || len(x) == 0 {
		return fmt.Errorf("%d groups against %d", len(x), len(y))
	}
	for i := range x {
		if len(x[i].DPS) != len(y[i].DPS) {
			return fmt.Errorf("group %d: %d points against %d", i, len(x[i].DPS), len(y[i].DPS))
		}
		for ts, v := range y[i].DPS {
			if w, ok := x[i].DPS[ts]; !ok || math.Abs(w-v) > 1e-9*math.Abs(v) {
				return fmt.Errorf("group %d at %s: %v against %v", i, ts, w, v)
			}
		}
	}
	return nil
}

// rollupQuery times the figure's query with rollups or ROLLUP_RAW: on
// one reader without row cache (every query reads and decodes its rows),
// or as the first query after a restart (rollupLoaded.restart, not
// timed) on a new reader with the default row cache.
func rollupQuery(rollups, firstAfterRestart bool) Measure {
	return func(e *Env) (float64, error) {
		l, err := loadRollups(e)
		if err != nil {
			return 0, err
		}
		q := l.query(rollups)
		if !firstAfterRestart {
			eng, err := l.engine(-1)
			if err != nil {
				return 0, err
			}
			var buf []byte
			return medianMs(e, func() (err error) { buf, err = runRollupQuery(eng, q, buf); return err })
		}
		ds := make([]float64, 0, e.Size.QueryRepeats)
		for range max(e.Size.QueryRepeats, 1) {
			if err := l.restart(e); err != nil {
				return 0, fmt.Errorf("restart: %w", err)
			}
			eng, err := l.engine(0)
			if err != nil {
				return 0, err
			}
			// A restarted daemon has no answer buffer yet.
			d, err := e.Time(func() error { _, err := runRollupQuery(eng, q, nil); return err })
			if err != nil {
				return 0, err
			}
			ds = append(ds, float64(d)/float64(time.Millisecond))
		}
		slices.Sort(ds)
		return Median(ds), nil
	}
}
