package service

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// ErrThrottled marks a point or commit the client should send again later.
var ErrThrottled = errors.New("please throttle writes")

// PointError is a point refused for its data; the client must not retry it.
type PointError struct {
	Err error
}

// Error returns the underlying reason.
func (e *PointError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying reason.
func (e *PointError) Unwrap() error { return e.Err }

// throttleError wraps a retryable failure with ErrThrottled.
type throttleError struct{ err error }

func (e *throttleError) Error() string   { return "Please throttle writes: " + e.err.Error() }
func (e *throttleError) Unwrap() []error { return []error{e.err, ErrThrottled} }

// ThrottleReason returns the text after "Please throttle writes: " for an
// error matching ErrThrottled (once: the head's memory refusal carries the
// phrase itself).
func ThrottleReason(err error) string {
	var te *throttleError
	if errors.As(err, &te) {
		err = te.err
	}
	return strings.TrimPrefix(err.Error(), "Please throttle writes: ")
}

// Options configure a Writer.
type Options struct {
	// UIDs resolves names to UIDs. Required.
	UIDs *uid.UIDs
	// Head receives the points. Required.
	Head *head.Head
	// MaxTags bounds a point's tags in every protocol's parser
	// (tsd.storage.max_tags). Default 32.
	MaxTags int
	// AllowSpecialChars widens OpenTSDB's name rules for telnet and
	// /api/put (tsd.core.tag.allow_specialchars). Default none.
	AllowSpecialChars string
	// InfluxSeparator joins an Influx measurement and field key into the
	// metric name. Default "_".
	InfluxSeparator string
	// Logger receives warnings. Default slog.Default().
	Logger *slog.Logger
	// Gate refuses every point while the daemon is read-only (a full
	// disk), before it reaches the UID table or the log: the client is told
	// to retry with the reason. Default none.
	Gate *ingest.Gate
	// RateLog writes the lines a client can make the Writer repeat (a
	// point refused by a series limit). Default: one over Logger.
	RateLog *ratelog.Logger
	// Rollups stores /api/rollup and telnet rollup points (rollup.go).
	// Default none: they are refused.
	Rollups *RollupOptions
	// Histograms stores /api/histogram and telnet histogram points
	// (histogram.go). Default none: they are refused.
	Histograms *HistogramOptions
}

// Counters count what a Writer stored and refused, per protocol. ReadOnly
// counts the throttled points refused because the daemon was read-only.
type Counters struct {
	Points, Bad, Throttled, ReadOnly atomic.Int64
	// TooLarge counts the requests (telnet: lines) refused for their size:
	// a body or a data point over its limit (413), a telnet line over
	// TelnetOptions.MaxLineBytes. The protocol handlers count them.
	TooLarge atomic.Int64
	// InvalidValues counts the bad points whose value is not a number
	// (OpenTSDB's rpc.errors type=invalid_values) and UnknownNames those
	// naming a metric or tag unknown with auto-creation off
	// (type=unknown_metrics); both are also in Bad.
	InvalidValues, UnknownNames atomic.Int64
	// Blocked counts the throttled points refused because the head was
	// over its memory limit (type=socket_writes_blocked); StoreErrors
	// those refused because the log or the store failed, a full disk
	// included (type=hbase_errors). Both are also in Throttled.
	Blocked, StoreErrors atomic.Int64
}

// Protocol names a protocol for counting.
type Protocol uint8

// The protocols a Writer counts separately.
const (
	Telnet Protocol = iota
	Put
	Influx
	RemoteWrite
	numProtocols
)

var protocolNames = [numProtocols]string{"telnet", "put", "influx", "remote_write"}

// String returns the protocol's name.
func (p Protocol) String() string { return protocolNames[p] }

// Writer turns parsed points into head appends. Safe for concurrent use;
// per-goroutine state lives in Sessions.
type Writer struct {
	opts  Options
	uids  *uid.UIDs
	head  *head.Head
	log   *slog.Logger
	pool  sync.Pool
	stats [numProtocols]Counters
	// histograms counts the histogram points stored (histogram.go).
	histograms atomic.Int64
	// gen counts DropCaches calls; a session whose name cache is older
	// empties it before its next point.
	gen atomic.Uint64
}

// NewWriter returns a Writer for opts.
func NewWriter(opts Options) (*Writer, error) {
	if opts.UIDs == nil || opts.Head == nil {
		return nil, errors.New("service: UIDs and Head are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RateLog == nil {
		opts.RateLog = ratelog.New(ratelog.Options{Logger: opts.Logger})
	}
	w := &Writer{opts: opts, uids: opts.UIDs, head: opts.Head, log: opts.Logger}
	w.pool.New = func() any { return &Session{w: w, app: w.head.NameAppender(w.uids, 0)} }
	return w, nil
}

// Options returns the options the Writer was made with, which the
// protocol handlers configure their parsers from.
func (w *Writer) Options() Options { return w.opts }

// Stats returns the counters of protocol p.
func (w *Writer) Stats(p Protocol) *Counters { return &w.stats[p] }

// DropCaches empties the UID caches and every session's series cache.
func (w *Writer) DropCaches() {
	w.uids.DropCaches()
	w.gen.Add(1)
}

// Session returns a session for protocol p, from a pool. Release it when done.
func (w *Writer) Session(p Protocol) *Session {
	s := w.pool.Get().(*Session)
	s.proto = p
	return s
}

// Session is one connection's or request's write state. Not safe for
// concurrent use.
type Session struct {
	w     *Writer
	proto Protocol
	app   *head.NameAppender // series remembered by name per session
	gen   uint64
	tags  []uid.Tag
	// pending counts points appended since the last Commit.
	pending int
	// rkey, rrow, rq and rval are AddRollup's reused buffers.
	rkey, rrow, rq, rval []byte
	// hist is AddHistogramJSON's histogram, reused.
	hist hist.Histogram
	// unreachable is the store failure an Add met since the last Commit
	// or Rollback: the rest of the request is refused at once with it
	// rather than each point waiting out the UID table's timeout (the
	// client retries the whole request anyway).
	unreachable error
}

// Release rolls back uncommitted points and returns s to its pool.
func (s *Session) Release() {
	s.app.Rollback()
	s.pending, s.unreachable = 0, nil
	s.w.pool.Put(s)
}

// Rollback drops the points waiting for Commit.
func (s *Session) Rollback() {
	s.app.Rollback()
	s.pending, s.unreachable = 0, nil
}

// Pending returns the number of points waiting for Commit.
func (s *Session) Pending() int { return s.pending }

// Add resolves p's names and appends it. The error is a *PointError for a
// bad point, or matches ErrThrottled when the client should retry.
func (s *Session) Add(ctx context.Context, p *parse.Point) error {
	// A copy, because a cache miss sorts the tags in place and the parser
	// may still need them (an Influx line's next field); one bulk copy
	// (parse.Tag is uid.Tag), not a field-by-field append.
	s.tags = append(s.tags[:0], p.Tags...)
	return s.add(ctx, p.Metric, s.tags, p)
}

// AddOwned is Add for a point whose tags the caller does not read again
// (a telnet line's): a series-cache miss may sort p.Tags in place, and
// they are not copied first.
func (s *Session) AddOwned(ctx context.Context, p *parse.Point) error {
	return s.add(ctx, p.Metric, p.Tags, p)
}

// AddKnown appends p to the series the session remembers under p.Key
// (parse.Point.Key) without reading its names, and reports whether it
// did: false, with nothing done, when p has no Key or the session knows
// none such (read the names, parse.NamesDecoder, and Add). The error is
// Add's.
func (s *Session) AddKnown(p *parse.Point) (ok bool, err error) {
	if p.Key == nil {
		return false, nil
	}
	if err := s.ready(); err != nil {
		return true, err
	}
	_, ok, err = s.app.AppendKnown(p.Key, p.Value)
	if !ok {
		return false, nil
	}
	if err != nil {
		return true, s.classify(err)
	}
	s.pending++
	return true, nil
}

func (s *Session) add(ctx context.Context, metric []byte, tags []uid.Tag, p *parse.Point) error {
	if err := s.ready(); err != nil {
		return err
	}
	if _, err := s.app.AppendKeyed(ctx, p.Key, metric, tags, p.Value); err != nil {
		return s.classify(err)
	}
	s.pending++
	return nil
}

// ready refuses a point while the store is unreachable and forgets the
// remembered series when the UIDs changed (Writer.gen).
func (s *Session) ready() error {
	if s.unreachable == nil {
		s.unreachable = s.w.opts.Gate.Err()
	}
	if s.unreachable != nil {
		s.countThrottled(1, s.unreachable)
		return &throttleError{s.unreachable}
	}
	if g := s.w.gen.Load(); g != s.gen {
		s.app.DropCache()
		s.gen = g
	}
	return nil
}

// Commit writes the pending points to the log (synced when sync is set).
// On error none of them is acknowledged; the error matches ErrThrottled.
func (s *Session) Commit(sync bool) error {
	n := s.pending
	s.pending, s.unreachable = 0, nil
	if n == 0 {
		return nil
	}
	// The gate closed since the points were added: none is logged, so
	// none is acknowledged.
	err := s.w.opts.Gate.Err()
	if err != nil {
		s.app.Rollback()
	} else {
		err = s.app.Commit(sync)
	}
	if err != nil {
		s.countThrottled(int64(n), err)
		return &throttleError{err}
	}
	s.w.stats[s.proto].Points.Add(int64(n))
	return nil
}

// Sync returns once every point the session committed is on stable
// storage (pending points are not committed: Commit first): the telnet
// version barrier. The log also syncs on its own interval, and concurrent
// barriers share one sync, so a barrier costs at most one sync and often
// none. On error (matching ErrThrottled) some committed points may not be
// on disk.
func (s *Session) Sync() error {
	if err := s.app.Sync(); err != nil {
		return &throttleError{err}
	}
	return nil
}

// CountBad counts n points refused by the protocol's parser.
func (s *Session) CountBad(n int) { s.w.stats[s.proto].Bad.Add(int64(n)) }

// CountBadErr counts one point the protocol's parser refused with err,
// also as an invalid value when err says its value is not a number.
func (s *Session) CountBadErr(err error) {
	c := &s.w.stats[s.proto]
	c.Bad.Add(1)
	var iv interface{ InvalidValue() bool }
	if errors.As(err, &iv) && iv.InvalidValue() {
		c.InvalidValues.Add(1)
	}
}

// classify sorts an Add failure: the point's own fault (a name the UID
// layer refuses, an unknown name with auto-creation off, a point the head
// cannot hold) is bad data; anything else is the server's condition and the
// client should retry, so nothing sendable is ever answered as bad data.
func (s *Session) classify(err error) error {
	if isDataError(err) {
		s.w.stats[s.proto].Bad.Add(1)
		if errors.Is(err, uid.ErrNoSuchName) {
			s.w.stats[s.proto].UnknownNames.Add(1)
		}
		s.logLimit(err)
		return &PointError{Err: err}
	}
	s.countThrottled(1, err)
	if storage.IsRetryable(err) {
		s.unreachable = err
	}
	return &throttleError{err}
}

// countThrottled counts n points refused with the retryable err.
func (s *Session) countThrottled(n int64, err error) {
	c := &s.w.stats[s.proto]
	c.Throttled.Add(n)
	if errors.Is(err, storage.ErrReadOnly) {
		c.ReadOnly.Add(n)
	}
	if errors.Is(err, head.ErrThrottled) {
		c.Blocked.Add(n)
	} else {
		c.StoreErrors.Add(n)
	}
}

// isDataError reports a refusal caused by the point itself. ErrInvalidName
// covers every name the UID layer refuses: a *NameError (a character the
// rules forbid, an empty name) and a name too long to be a row key (over
// storage.MaxRowKeySize bytes), which used to fall through to the throttle
// branch and made senders retry it for ever.
func isDataError(err error) bool {
	return errors.Is(err, uid.ErrInvalidName) || errors.Is(err, uid.ErrNoSuchName) ||
		errors.Is(err, uid.ErrNotLatin1) || errors.Is(err, uid.ErrDuplicateTag) ||
		errors.Is(err, head.ErrOutOfBounds) || errors.Is(err, head.ErrBadSeriesKey) ||
		errors.Is(err, head.ErrSeriesLimit)
}

// logLimit tells the operator, within the rate log's budget, that a series
// limit refuses points: the client only sees its own refusals.
func (s *Session) logLimit(err error) {
	var le *head.SeriesLimitError
	if errors.As(err, &le) {
		s.w.opts.RateLog.Warn("ingest.series_limit", "", "new series refused by a series limit",
			"limit", le.Limit, "max", le.Max, "protocol", s.proto.String())
	}
}
