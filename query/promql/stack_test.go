package promql_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	tsdstorage "github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// stack is tsd's real write and read path on a pebble store in a temp
// dir, as cmd/tsd wires it: UIDs, series index, head with its log,
// flusher, reader and the Queryable.
type stack struct {
	db      *tsdpebble.DB
	uids    *uid.UIDs
	index   *index.Index
	head    *head.Head
	flusher *flush.Flusher
	reader  *read.Reader
	q       *promql.Queryable
	names   *head.NameAppender
	valid   *uid.Validator
}

// skippedSamples counts the samples outside what tsd stores.
var skippedSamples atomic.Int64

// stackOptions vary the stack between tests.
type stackOptions struct {
	format schema.Format
	limits read.Limits
	// rollups computes the default configuration's rollups at flush and
	// lets the reader read them.
	rollups bool
	// noRollups is the Queryable's DisableRollups.
	noRollups bool
	// rowCache is the reader's RowCacheBytes (0: the default).
	rowCache int64
	// clockMs is the head's clock (ms) when not 0; default the epoch.
	clockMs int64
	// plan is the reader's Plan.
	plan read.Plan
	// sole makes the flusher the rollup tables' sole writer, as the
	// daemon on Pebble runs it (flush.RollupOptions.SoleWriter).
	sole bool
}

func openStack(t testing.TB, o stackOptions) *stack {
	t.Helper()
	s, err := openStackErr(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.close() })
	return s
}

func openStackErr(dir string, o stackOptions) (_ *stack, err error) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	s := &stack{valid: uid.NewValidator(uid.RulesLossless, "")}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	s.db, err = tsdpebble.Open(filepath.Join(dir, "db"), &tsdpebble.Options{Logger: quiet, GCInterval: -1,
		CacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		return s, err
	}
	data, uidTbl, meta, err := ensureTables(ctx, s.db)
	if err != nil {
		return s, err
	}
	if s.uids, err = uid.New(uidTbl, &uid.Options{Logger: quiet, Format: o.format}); err != nil {
		return s, err
	}
	if s.index, err = index.Open(ctx, meta, s.uids, &index.Options{Logger: quiet}); err != nil {
		return s, err
	}
	// The head's clock stands still at the epoch, so that a flush at a
	// data time writes exactly the rows whose hour ended before it.
	s.head, err = head.OpenHead(vfs.Default, filepath.Join(dir, "wal"), &head.HeadOptions{
		Registrar: s.index, Logger: quiet, MaxTags: 64, Clock: func() time.Time { return time.UnixMilli(o.clockMs) }})
	if err != nil {
		return s, err
	}
	layout := rowkey.DefaultLayout()
	var fro *flush.RollupOptions
	var rro *read.Rollups
	if o.rollups {
		if fro, err = ensureRollupTables(ctx, s.db); err != nil {
			return s, err
		}
		fro.SoleWriter = o.sole
		rro = &read.Rollups{Config: fro.Config, Tables: fro.Tables}
	}
	s.flusher, err = flush.NewFlusher(s.head, &flush.FlushOptions{Table: data, Meta: meta, Layout: &layout,
		Format: o.format, WriterID: 1, Grace: time.Millisecond, Spread: -1, RowsPerSecond: -1, Rollups: fro})
	if err != nil {
		return s, err
	}
	if s.reader, err = read.New(&read.Options{Data: data, Layout: layout, Head: s.head, Logger: quiet,
		Rollups: rro, RowCacheBytes: o.rowCache, Plan: o.plan}); err != nil {
		return s, err
	}
	s.q, err = promql.New(&promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids, Limits: o.limits,
		DisableRollups: o.noRollups})
	s.names = s.head.NameAppender(s.uids, 0)
	return s, err
}

func ensureTables(ctx context.Context, db *tsdpebble.DB) (data, uids, meta tsdstorage.Table, err error) {
	tbls, err := tsdstorage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		return nil, nil, nil, err
	}
	return tbls[0], tbls[1], tbls[2], nil
}

// ensureRollupTables creates the default rollup configuration's tables.
func ensureRollupTables(ctx context.Context, db *tsdpebble.DB) (*flush.RollupOptions, error) {
	cfg := rollup.DefaultConfig()
	ro := &flush.RollupOptions{Config: cfg, Tables: make([]tsdstorage.Table, len(cfg.Intervals))}
	for i, iv := range cfg.Intervals {
		if iv.Default {
			continue
		}
		if err := db.EnsureTable(ctx, schema.DataTableSpec(iv.Table)); err != nil {
			return nil, err
		}
		var err error
		if ro.Tables[i], err = db.Table(ctx, iv.Table); err != nil {
			return nil, err
		}
	}
	return ro, nil
}

func (s *stack) close() error {
	var errs []error
	if s.head != nil {
		errs = append(errs, s.head.Close())
	}
	if s.index != nil {
		errs = append(errs, s.index.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}

// append adds one sample of the series l: __name__ is the metric, the
// other labels tags (empty values are absent labels, as in Prometheus).
// Samples outside [0, promql.MaxTime] are counted in skippedSamples.
func (s *stack) append(ctx context.Context, l labels.Labels, t int64, v float64) error {
	return s.appendPoint(ctx, l, series.Float64Point(t, v))
}

// appendPoint is append for a typed point.
func (s *stack) appendPoint(ctx context.Context, l labels.Labels, p series.Point) error {
	if p.T < 0 || p.T > promql.MaxTime {
		skippedSamples.Add(1)
		return nil
	}
	metric := l.Get(labels.MetricName)
	if err := s.valid.ValidateString(uid.Metric, metric); err != nil {
		return err
	}
	var tags []uid.Tag
	var err error
	l.Range(func(lb labels.Label) {
		if lb.Name == labels.MetricName || lb.Value == "" || err != nil {
			return
		}
		if err = s.valid.ValidateString(uid.TagK, lb.Name); err == nil {
			err = s.valid.ValidateString(uid.TagV, lb.Value)
		}
		tags = append(tags, uid.Tag{Key: []byte(lb.Name), Value: []byte(lb.Value)})
	})
	if err != nil {
		return err
	}
	_, err = s.names.Append(ctx, []byte(metric), tags, p)
	return err
}

// commit makes the appended samples visible.
func (s *stack) commit() error { return s.names.Commit(false) }

// flushBefore writes to the store every row whose hour ended before t
// (ms); the rest stays in the head.
func (s *stack) flushBefore(ctx context.Context, t int64) error {
	_, err := s.flusher.Flush(ctx, time.UnixMilli(t), false)
	return err
}

// flushAll writes every row to the store.
func (s *stack) flushAll(ctx context.Context) error {
	_, err := s.flusher.Flush(ctx, time.UnixMilli(0), true)
	return err
}

// promStorage is a Prometheus storage.Storage over a stack: appends go
// through tsd's write path and queries through promql.Queryable. Each
// commit flushes the rows older than the middle of its samples' time range,
// so that queries read both the store and the head.
type promStorage struct {
	s *stack
}

var _ storage.Storage = (*promStorage)(nil)

func (p *promStorage) Querier(mint, maxt int64) (storage.Querier, error) {
	return p.s.q.Querier(mint, maxt)
}
func (p *promStorage) ChunkQuerier(int64, int64) (storage.ChunkQuerier, error) {
	return storage.NoopChunkedQuerier(), nil
}
func (p *promStorage) Appender(ctx context.Context) storage.Appender {
	return &promAppender{s: p.s, ctx: ctx}
}
func (p *promStorage) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &promAppenderV2{promAppender{s: p.s, ctx: ctx}}
}
func (p *promStorage) StartTime() (int64, error) { return 0, nil }
func (p *promStorage) Close() error {
	builtinPushdowns.Add(p.s.q.Stats().PushdownSelects)
	return p.s.close()
}

// promAppender buffers samples until Commit.
type promAppender struct {
	s       *stack
	ctx     context.Context
	pending []pendingSample
}

type pendingSample struct {
	l labels.Labels
	t int64
	v float64
}

var errNoHistograms = errors.New("tsd stores no native histograms")

func (a *promAppender) Append(_ storage.SeriesRef, l labels.Labels, t int64, v float64) (storage.SeriesRef, error) {
	a.pending = append(a.pending, pendingSample{l, t, v})
	return 0, nil
}
func (a *promAppender) SetOptions(*storage.AppendOptions) {}
func (a *promAppender) AppendExemplar(storage.SeriesRef, labels.Labels, exemplar.Exemplar) (storage.SeriesRef, error) {
	return 0, nil
}
func (a *promAppender) AppendHistogram(storage.SeriesRef, labels.Labels, int64, *histogram.Histogram, *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, errNoHistograms
}
func (a *promAppender) AppendHistogramSTZeroSample(storage.SeriesRef, labels.Labels, int64, int64, *histogram.Histogram, *histogram.FloatHistogram) (storage.SeriesRef, error) {
	return 0, errNoHistograms
}
func (a *promAppender) UpdateMetadata(storage.SeriesRef, labels.Labels, metadata.Metadata) (storage.SeriesRef, error) {
	return 0, nil
}
func (a *promAppender) AppendSTZeroSample(storage.SeriesRef, labels.Labels, int64, int64) (storage.SeriesRef, error) {
	return 0, nil
}
func (a *promAppender) Rollback() error {
	a.pending = nil
	a.s.names.Rollback()
	return nil
}

// Commit appends the samples through the head, commits, and flushes the
// rows that ended before the middle of their time range.
func (a *promAppender) Commit() error {
	if len(a.pending) == 0 {
		return nil
	}
	lo, hi := a.pending[0].t, a.pending[0].t
	for _, p := range a.pending {
		if err := a.s.append(a.ctx, p.l, p.t, p.v); err != nil {
			a.s.names.Rollback()
			return fmt.Errorf("append %s @%d: %w", p.l, p.t, err)
		}
		lo, hi = min(lo, p.t), max(hi, p.t)
	}
	a.pending = nil
	if err := a.s.commit(); err != nil {
		return err
	}
	return a.s.flushBefore(a.ctx, lo+(hi-lo)/2)
}

type promAppenderV2 struct{ promAppender }

func (a *promAppenderV2) Append(_ storage.SeriesRef, l labels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, _ storage.AppendV2Options) (storage.SeriesRef, error) {
	if h != nil || fh != nil {
		return 0, errNoHistograms
	}
	return a.promAppender.Append(0, l, t, v)
}
