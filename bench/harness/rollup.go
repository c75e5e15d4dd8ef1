package harness

import (
	"context"
	"runtime/pprof"
	"time"

	"github.com/tsd-db/tsd/bench/dirsize"
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// rollupFigures are issue 19's write-side rows: the ingest cost of the
// rollups tsd computes at flush and compaction, and the size of their
// tables, each beside the same path with rollups off.
func rollupFigures(e *Env) []Figure {
	if e.OpenStore == nil {
		return nil
	}
	return []Figure{
		{
			Name: "ingest devops int, head + WAL + flush, rollups on (1h, 1d) vs off", Unit: "points/s",
			TSD:  Side{Name: "tsd, rollups on", Measure: rollupIngestRate(true)},
			Peer: Side{Name: "tsd, rollups off", Measure: rollupIngestRate(false)},
		},
		{
			Name: "rollup tables vs raw table, devops int, bytes/point", Unit: "B", LowerIsBetter: true, Once: true,
			TSD:  Side{Name: "tsdb-rollup-1h + tsdb-rollup-1d (packed 1h rows, 1d cell columns)", Measure: rollupBytes(true)},
			Peer: Side{Name: "tsdb (dense hour rows)", Measure: rollupBytes(false)},
		},
	}
}

// enableRollups creates the default configuration's rollup tables and
// returns the flusher's options for them.
func (w *tsdWriter) enableRollups(ctx context.Context) (*flush.RollupOptions, error) {
	cfg := rollup.DefaultConfig()
	// One writer on its own Pebble store, as the daemon runs it.
	o := &flush.RollupOptions{Config: cfg, Tables: make([]storage.Table, len(cfg.Intervals)), SoleWriter: true}
	for i, iv := range cfg.Intervals {
		if iv.Default {
			continue
		}
		if err := w.db.EnsureTable(ctx, schema.DataTableSpec(iv.Table)); err != nil {
			return nil, err
		}
		t, err := w.db.Table(ctx, iv.Table)
		if err != nil {
			return nil, err
		}
		o.Tables[i] = t
	}
	return o, nil
}

// rollupLoad loads the int devops dataset as a live daemon would: the
// head's clock at the dataset's start (so every row is new to the store
// and flushed once, its hour complete), then every row flushed and the
// compaction queue drained, with rollups on or off. measured is timed by
// the Env's clock.
func rollupLoad(e *Env, on bool, prefix string, after func(w *tsdWriter, d *promtsdb.Data) error) (time.Duration, error) {
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		return 0, err
	}
	start := time.UnixMilli(d.Start)
	w, err := openTSDWriter(e, d, prefix, head.HeadOptions{MaxMemory: -1, Clock: func() time.Time { return start }})
	if err != nil {
		return 0, err
	}
	defer w.close()
	ctx := context.Background()
	var ro *flush.RollupOptions
	if on {
		if ro, err = w.enableRollups(ctx); err != nil {
			return 0, err
		}
	}
	var f *flush.Flusher
	el, err := e.Time(func() error {
		if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
			return err
		}
		f, err = w.flushWith(d, &flush.FlushOptions{Table: w.data, Meta: w.meta, WriterID: 1, RowsPerSecond: -1, Rollups: ro})
		return err
	})
	if err != nil {
		return 0, err
	}
	if on {
		e.Logf("rollups: %+v", f.RollupStats())
	}
	if after != nil {
		err = after(w, d)
	}
	return el, err
}

// rollupIngestRate is points per second of rollupLoad.
func rollupIngestRate(on bool) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		// The profiler label rollup_ingest=on|off (tsdbench -cpuprofile)
		// separates the two sides; goroutines started meanwhile inherit it.
		side := "off"
		if on {
			side = "on"
		}
		var el time.Duration
		pprof.Do(context.Background(), pprof.Labels("rollup_ingest", side), func(context.Context) {
			el, err = rollupLoad(e, on, "tsd-rollup-ingest", nil)
		})
		if err != nil {
			return 0, err
		}
		return rate(d.NumSamples(), el)
	}
}

// rollupBytes loads the dataset with rollups on, compacts the store and
// returns the sstable bytes per raw point of the rollup tables (tables
// true) or of the raw data table.
func rollupBytes(tables bool) Measure {
	return func(e *Env) (float64, error) {
		var v float64
		_, err := rollupLoad(e, true, "tsd-rollup-bytes", func(w *tsdWriter, d *promtsdb.Data) error {
			names := []string{tsdDataTable}
			if tables {
				names = []string{"tsdb-rollup-1h", "tsdb-rollup-1d"}
			}
			r, err := dirsize.TSD(context.Background(), w.db, w.storeDir, names, uint64(d.NumSamples()))
			if err != nil {
				return err
			}
			e.Logf("%v: %d B (%.4f B/pt); %s", names, r.Data, r.PerPoint(r.Data), r.Note)
			v = r.PerPoint(r.Data)
			return nil
		})
		return v, err
	}
}
