package opentsdb

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// DefaultTimeout is Options.Timeout's default (tsd.query.timeout).
const DefaultTimeout = 2 * time.Minute

// DefaultMaxOutputPoints is tsd.query.limits.output_points' default: ten
// million points, some 150 MB of JSON (Prometheus caps a range query at
// 11,000 points per series, VictoriaMetrics at 30,000).
const DefaultMaxOutputPoints = 10_000_000

// Options configure an Engine. Zero fields take the documented defaults.
type Options struct {
	// Reader reads series points from the store and the head. Required.
	Reader *read.Reader
	// UIDs resolve names and UIDs. Required.
	UIDs *uid.UIDs
	// Index selects series by metric and tags. Required.
	Index *index.Index
	// Limits bound each query's series, points and bytes. Default zero:
	// unlimited.
	Limits read.Limits
	// MaxOutputPoints bounds the points one answer holds
	// (tsd.query.limits.output_points): a query whose plan bounds its
	// answer above it is refused before reading, any other stops when it
	// passes it, with an *OutputLimitError. Default zero: unlimited (the
	// daemon's default is DefaultMaxOutputPoints).
	MaxOutputPoints int64
	// Timeout bounds each query; a negative value means none. Default
	// DefaultTimeout (2 minutes).
	Timeout time.Duration
	// AllowDelete lets a query delete the data it read
	// (tsd.http.query.allow_delete). Default false: a delete is refused
	// with 400.
	AllowDelete bool
	// Deleter removes the stored rows of a deleting query. Required when
	// AllowDelete is set.
	Deleter Deleter
	// SkipUnresolvedTagVs ignores unknown tag values in literal filters
	// instead of refusing the query (tsd.query.skip_unresolved_tagvs).
	// Default false.
	SkipUnresolvedTagVs bool
	// Location is the zone of absolute dates when a query names none
	// (tsd.core.timezone). Default UTC.
	Location *time.Location
	// Now is the clock of "now" and relative times. Default time.Now.
	Now func() time.Time
	// Annotations supplies the global annotations of globalAnnotations.
	// Default nil: none are returned. Series annotations come with the
	// series' rows and need no store.
	Annotations *annotation.Store
	// Logger receives failed queries. Default slog.Default().
	Logger *slog.Logger
	// PreAgg reads the pre-aggregation tables: its Data is the default
	// interval's preAggregationTable and its rollup tables the intervals'
	// preAggregationTables. A sub-query with preAggregate set, or with a
	// literal_or filter on AggTagKey whose value is not RawAggTagValue,
	// reads through it (OpenTSDB 2.4's pre-aggregate routing). Default
	// nil: every sub-query reads Reader.
	PreAgg *read.Reader
	// AggTagKey is the pre-aggregate tag key (tsd.rollups.agg_tag_key).
	// Default "_aggregate".
	AggTagKey string
	// Histograms decodes the histogram cells of percentiles and
	// show-histogram-buckets sub-queries (tsd.core.histograms.config).
	// Default nil: such sub-queries find no histogram.
	Histograms *hist.Codecs
	// RawAggTagValue is its value on raw series
	// (tsd.rollups.raw_agg_tag_value); a filter on it does not route.
	// Default "RAW".
	RawAggTagValue string
}

// Deleter deletes the stored points of series in a time range; the query
// engine calls it for a query with delete set.
type Deleter interface {
	// DeleteRange deletes the points of the series (TSUIDs) in [start, end]
	// ms.
	DeleteRange(ctx context.Context, tsuids []string, start, end int64) error
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.AggTagKey == "" {
		o.AggTagKey = "_aggregate"
	}
	if o.RawAggTagValue == "" {
		o.RawAggTagValue = "RAW"
	}
	return o
}

// Validate reports the first missing field.
func (o *Options) Validate() error {
	switch {
	case o.Reader == nil:
		return errors.New("query: Options.Reader is required")
	case o.UIDs == nil:
		return errors.New("query: Options.UIDs is required")
	case o.Index == nil:
		return errors.New("query: Options.Index is required")
	case o.AllowDelete && o.Deleter == nil:
		return errors.New("query: Options.Deleter is required with AllowDelete")
	case o.MaxOutputPoints < 0:
		return errors.New("query: Options.MaxOutputPoints must not be negative")
	}
	return nil
}

// ErrTimeout is matched by every *TimeoutError.
var ErrTimeout = errors.New("query timed out")

// TimeoutError is a query stopped by Options.Timeout. HTTP answers 408.
type TimeoutError struct {
	// Timeout is the limit that passed.
	Timeout time.Duration
}

// Error says which limit passed.
func (e *TimeoutError) Error() string {
	return "Query timeout exceeded: the query ran longer than " +
		strconv.FormatInt(e.Timeout.Milliseconds(), 10) + " ms (tsd.query.timeout)"
}

// Is matches ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// DeleteDisabled is OpenTSDB's refusal of a delete when
// tsd.http.query.allow_delete is off (QueryRpc.execute).
const DeleteDisabled = "Deleting data is not enabled (tsd.http.query.allow_delete=false)"

// Engine executes /api/query requests. It is safe for concurrent use.
type Engine struct {
	opts   Options
	execs  sync.Pool // *executor
	noFuse bool      // tests: always read raw points (export_test.go)
	eager  bool      // tests: always read raw points whole (export_test.go)
}

// New returns an Engine.
func New(opts *Options) (*Engine, error) {
	o := *opts
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{opts: o}
	e.execs.New = func() any { return &executor{e: e} }
	return e, nil
}

// Options returns the engine's options, defaults filled.
func (e *Engine) Options() Options { return e.opts }

// Execute validates q (setting its parsed times and sub-query fields) and
// runs it. The Result must be released with Release when written. Errors
// are described in the package doc.
func (e *Engine) Execute(ctx context.Context, q *tsquery.TSQuery) (*Result, error) {
	if err := e.validate(q); err != nil {
		return nil, err
	}
	if e.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, e.opts.Timeout, &TimeoutError{Timeout: e.opts.Timeout})
		defer cancel()
	}
	x := e.execs.Get().(*executor)
	defer e.putExecutor(x)
	res := getResult(q)
	r, err := x.start(ctx, q, res)
	for more := err == nil; more; {
		more, err = x.next(ctx, &r, res)
	}
	if err != nil {
		res.Release()
		return nil, e.classify(ctx, q, err)
	}
	res.finish()
	return res, nil
}

// validate checks q and sets its parsed fields.
func (e *Engine) validate(q *tsquery.TSQuery) error {
	if err := q.Validate(tsquery.ValidateOptions{Now: e.opts.Now().UnixMilli(), Location: e.opts.Location}); err != nil {
		return err
	}
	if q.Delete && !e.opts.AllowDelete {
		return &tsquery.Error{Msg: DeleteDisabled}
	}
	return nil
}

// putExecutor drops x's references to the query and pools it.
func (e *Engine) putExecutor(x *executor) {
	x.reset()
	e.execs.Put(x)
}

// classify turns a context error caused by the timeout into the
// *TimeoutError and logs failures that are not the request's fault.
func (e *Engine) classify(ctx context.Context, q *tsquery.TSQuery, err error) error {
	var te *TimeoutError
	if errors.As(context.Cause(ctx), &te) && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout)) {
		err = te
	}
	if !errors.Is(err, tsquery.ErrBadRequest) && !errors.Is(err, read.ErrLimit) {
		e.opts.Logger.Warn("query failed", "err", err, "query", q.String())
	}
	return err
}
