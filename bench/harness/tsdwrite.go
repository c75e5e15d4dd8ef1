package harness

import (
	"github.com/tsd-db/tsd/uid/tsmeta"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/bench/dirsize"
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Table names as cmd/tsd creates them; dirsize counts "tsdb" as data.
const (
	tsdDataTable = "tsdb"
	tsdMetaTable = "tsdb-meta"
)

// tsdWriter is tsd's write path on a fresh directory: a storage engine
// (e.OpenStore unless openTSDWriterOn is given another) with its data, UID
// and meta tables, the series index as the head's registrar, and the head
// with its log on vfs.Default.
type tsdWriter struct {
	dir, storeDir, walDir string
	db                    storage.DB
	data, meta            storage.Table
	u                     *uid.UIDs
	ix                    *index.Index
	h                     *head.Head
	keys                  [][]byte    // by series of promtsdb.Data, UIDs resolved
	track                 tsmeta.Mode // TSMeta tracking of flushAll; default off
}

// storeOpener opens a storage engine in dir (Env.OpenStore's shape).
type storeOpener func(dir string) (storage.DB, error)

func openTSDWriter(e *Env, d *promtsdb.Data, prefix string, opts head.HeadOptions) (*tsdWriter, error) {
	return openTSDWriterOn(e, e.OpenStore, d, prefix, opts)
}

// openTSDWriterOn is openTSDWriter on the engine open opens.
func openTSDWriterOn(e *Env, open storeOpener, d *promtsdb.Data, prefix string, opts head.HeadOptions) (w *tsdWriter, err error) {
	if open == nil {
		return nil, errors.New("no storage engine")
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	w = &tsdWriter{}
	if w.dir, err = e.TempDir(prefix); err != nil {
		return nil, err
	}
	w.storeDir, w.walDir = filepath.Join(w.dir, "store"), filepath.Join(w.dir, "wal")
	defer func() {
		if err != nil {
			_ = w.close()
		}
	}()
	if w.db, err = open(w.storeDir); err != nil {
		return w, err
	}
	for _, spec := range []storage.TableSpec{
		{Name: tsdDataTable, Families: []storage.FamilySpec{{Name: flush.DefaultFlushFamily, MaxVersions: 1}}},
		schema.MetaTableSpec(tsdMetaTable),
	} {
		if err = w.db.EnsureTable(ctx, spec); err != nil {
			return w, err
		}
	}
	if w.data, err = w.db.Table(ctx, tsdDataTable); err != nil {
		return w, err
	}
	if w.meta, err = w.db.Table(ctx, tsdMetaTable); err != nil {
		return w, err
	}
	if w.u, err = uid.Open(ctx, w.db, &uid.Options{Logger: quiet}); err != nil {
		return w, err
	}
	if w.ix, err = index.Open(ctx, w.meta, w.u, &index.Options{RefreshInterval: -1, Logger: quiet}); err != nil {
		return w, err
	}
	opts.Registrar, opts.Logger = w.ix, quiet
	if w.h, err = head.OpenHead(vfs.Default, w.walDir, &opts); err != nil {
		return w, err
	}
	w.keys, err = resolveKeys(ctx, w.u, d)
	return w, err
}

// resolveKeys assigns UIDs to every series' names once, as a collector's
// connection caches them, and returns the series keys the head takes.
func resolveKeys(ctx context.Context, u *uid.UIDs, d *promtsdb.Data) ([][]byte, error) {
	names := namesOf(d)
	keys := make([][]byte, len(names.metric))
	for i := range keys {
		k, err := u.ResolvePoint(ctx, nil, names.metric[i], names.tags[i])
		if err != nil {
			return nil, fmt.Errorf("resolve series %d: %w", i, err)
		}
		head.SortSeriesKey(k, series.DefaultWidths())
		keys[i] = k
	}
	return keys, nil
}

// appendAll appends d's values as int points in time order, creating each
// series (head + index) at its first point and reusing its ref after, a
// Commit every commitEvery points: what promtsdb.Append does.
func (w *tsdWriter) appendAll(d *promtsdb.Data, commitEvery int) error {
	refs := make([]head.SeriesRef, len(w.keys))
	made := make([]bool, len(w.keys))
	n := len(w.keys)
	a := w.h.Appender()
	for i, v := range d.Values {
		s := i % n
		p := series.IntPoint(d.Start+int64(i/n)*d.Step, int64(v))
		if !made[s] {
			ref, err := a.AppendKey(w.keys[s], p)
			if err != nil {
				return fmt.Errorf("tsd append point %d: %w", i, err)
			}
			refs[s], made[s] = ref, true
		} else if err := a.Append(refs[s], p); err != nil {
			return fmt.Errorf("tsd append point %d: %w", i, err)
		}
		if (i+1)%commitEvery == 0 {
			if err := a.Commit(false); err != nil {
				return fmt.Errorf("tsd commit at point %d: %w", i, err)
			}
		}
	}
	if err := a.Commit(false); err != nil {
		return fmt.Errorf("tsd commit: %w", err)
	}
	return nil
}

func (w *tsdWriter) close() error {
	var errs []error
	if w.h != nil {
		errs = append(errs, w.h.Close())
	}
	if w.ix != nil {
		errs = append(errs, w.ix.Close())
	}
	if w.db != nil {
		errs = append(errs, w.db.Close())
	}
	if w.dir != "" {
		errs = append(errs, os.RemoveAll(w.dir))
	}
	return errors.Join(errs...)
}

// tsdAppendRate appends the int dataset through tsd's head and log, as
// promAppendRate does through Prometheus's; UIDs are resolved before the
// clock starts (Prometheus needs none).
func tsdAppendRate(e *Env) (float64, error) {
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		return 0, err
	}
	w, err := openTSDWriter(e, d, "tsd-append", head.HeadOptions{})
	if err != nil {
		return 0, err
	}
	el, err := e.Time(func() error { return w.appendAll(d, promtsdb.DefaultCommitEvery) })
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return rate(d.NumSamples(), el)
}

// tsdDiskBytes loads the dataset through the head, flushes every row to
// the store in the dense format, truncates the log, compacts the store and
// returns its sstable bytes (data + index, UID and meta tables) per point,
// as promBlockBytes returns the block's chunks + index.
func tsdDiskBytes(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, vm)
		if err != nil {
			return 0, err
		}
		w, err := openTSDWriter(e, d, "tsd-disk", head.HeadOptions{MaxMemory: -1})
		if err != nil {
			return 0, err
		}
		v, err := w.diskBytes(e, d)
		if cerr := w.close(); err == nil {
			err = cerr
		}
		return v, err
	}
}

func (w *tsdWriter) diskBytes(e *Env, d *promtsdb.Data) (float64, error) {
	ctx := context.Background()
	if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
		return 0, err
	}
	f, err := flush.NewFlusher(w.h, &flush.FlushOptions{Table: w.data, Meta: w.meta, WriterID: 1, RowsPerSecond: -1})
	if err != nil {
		return 0, err
	}
	farFuture := time.UnixMilli(d.MaxTime()).Add(24 * time.Hour)
	fst, err := f.Flush(ctx, farFuture, true)
	if err != nil {
		return 0, fmt.Errorf("flush: %w", err)
	}
	c, err := f.NewCompactor(nil)
	if err != nil {
		return 0, err
	}
	cst, err := c.Drain(ctx)
	if err != nil {
		return 0, fmt.Errorf("drain: %w", err)
	}
	if err := w.ix.Flush(ctx); err != nil {
		return 0, fmt.Errorf("index flush: %w", err)
	}
	r, err := dirsize.TSD(ctx, w.db, w.storeDir, dirsize.DefaultDataTables, uint64(d.NumSamples()))
	if err != nil {
		return 0, err
	}
	wr, err := dirsize.Pebble(w.walDir)
	if err != nil {
		return 0, err
	}
	e.Logf("tsd store: flush %+v, compact %+v", fst, cst)
	e.Logf("tsd store: data %d B (%.3f B/pt), index+uid+meta %d B (%.3f B/pt), pebble log %d B, other %d B; head log dir after truncation %d B in %d files; whole directory %.3f B/pt; %s",
		r.Data, r.PerPoint(r.Data), r.Index, r.PerPoint(r.Index), r.WAL, r.Other, wr.Total, wr.Files,
		r.PerPoint(r.Total+wr.Total), r.Note)
	return r.PerPoint(r.Data + r.Index), nil
}

// seriesNames are the names of every series of d as a parser hands them
// over: the metric and the tags, as bytes.
type seriesNames struct {
	metric [][]byte
	tags   [][]uid.Tag
}

func namesOf(d *promtsdb.Data) *seriesNames {
	n := &seriesNames{}
	for _, ls := range d.Labels {
		var metric []byte
		var tags []uid.Tag
		ls.Range(func(l labels.Label) {
			if l.Name == "__name__" {
				metric = []byte(l.Value)
				return
			}
			tags = append(tags, uid.Tag{Key: []byte(l.Name), Value: []byte(l.Value)})
		})
		n.metric, n.tags = append(n.metric, metric), append(n.tags, tags)
	}
	return n
}

// appendNames appends d's values by name through an head.NameAppender
// (UID caches warm from resolveKeys, series remembered by name as a
// connection does), a Commit every commitEvery points.
func (w *tsdWriter) appendNames(d *promtsdb.Data, names *seriesNames, commitEvery int) error {
	ctx := context.Background()
	na := w.h.NameAppender(w.u, 0)
	n := len(names.metric)
	for i, v := range d.Values {
		s := i % n
		p := series.IntPoint(d.Start+int64(i/n)*d.Step, int64(v))
		if _, err := na.Append(ctx, names.metric[s], names.tags[s], p); err != nil {
			return fmt.Errorf("tsd append point %d: %w", i, err)
		}
		if (i+1)%commitEvery == 0 {
			if err := na.Commit(false); err != nil {
				return fmt.Errorf("tsd commit at point %d: %w", i, err)
			}
		}
	}
	if err := na.Commit(false); err != nil {
		return fmt.Errorf("tsd commit: %w", err)
	}
	return nil
}

// tsdNamesRate appends the int dataset by name: uid + index + head + WAL.
func tsdNamesRate(e *Env) (float64, error) {
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		return 0, err
	}
	names := namesOf(d)
	w, err := openTSDWriter(e, d, "tsd-names", head.HeadOptions{})
	if err != nil {
		return 0, err
	}
	el, err := e.Time(func() error { return w.appendNames(d, names, promtsdb.DefaultCommitEvery) })
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return rate(d.NumSamples(), el)
}

// promLabelsRate appends the int dataset to a fresh Prometheus DB giving
// every sample its label set and no cached reference, as a receiver of
// names (remote_write) does.
func promLabelsRate(e *Env) (float64, error) {
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		return 0, err
	}
	dir, err := e.TempDir("prom-labels")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	db, err := promtsdb.Open(dir)
	if err != nil {
		return 0, err
	}
	el, err := e.Time(func() error { return promAppendLabels(db, d, promtsdb.DefaultCommitEvery) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return rate(d.NumSamples(), el)
}

func promAppendLabels(db *tsdb.DB, d *promtsdb.Data, commitEvery int) error {
	ctx := context.Background()
	n := len(d.Labels)
	app := db.Appender(ctx)
	for i, v := range d.Values {
		s := i % n
		if _, err := app.Append(0, d.Labels[s], d.Start+int64(i/n)*d.Step, v); err != nil {
			_ = app.Rollback()
			return fmt.Errorf("prometheus append sample %d: %w", i, err)
		}
		if (i+1)%commitEvery == 0 {
			if err := app.Commit(); err != nil {
				return fmt.Errorf("prometheus commit at sample %d: %w", i, err)
			}
			app = db.Appender(ctx)
		}
	}
	return app.Commit()
}
