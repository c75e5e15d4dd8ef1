package last

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Defaults of Options.
const (
	DefaultNoSpanHours = 24
	DefaultMaxBackScan = 366 * 24
	DefaultMaxSeries   = 100_000
	DefaultParallelism = 8
)

const hourMs = 3_600_000

// Options configure a Service. Zero fields take the documented defaults.
type Options struct {
	// Reader reads the store and the head. Required.
	Reader *read.Reader
	// Index lists series and their hour spans. Required.
	Index *index.Index
	// UIDs resolves names. Required.
	UIDs *uid.UIDs
	// Now is the clock back_scan counts from. Default time.Now.
	Now func() time.Time
	// NoSpanHours is how many hours before the current one a back_scan 0
	// query searches for a series whose hours the index does not know.
	// Default 24.
	NoSpanHours int
	// MaxBackScan is the largest back_scan accepted, in hours; a larger
	// one is a 400 (each hour may cost a read per series). Default 8784
	// (366 days).
	MaxBackScan int
	// MaxSeries is the most series one request may select; more is a
	// *read.LimitError (413). Default 100,000.
	MaxSeries int
	// Parallelism is how many series are searched at once. Default 8.
	Parallelism int
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.NoSpanHours = orInt(o.NoSpanHours, DefaultNoSpanHours)
	o.MaxBackScan = orInt(o.MaxBackScan, DefaultMaxBackScan)
	o.MaxSeries = orInt(o.MaxSeries, DefaultMaxSeries)
	o.Parallelism = orInt(o.Parallelism, DefaultParallelism)
	return o
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Validate reports the first missing or invalid field.
func (o *Options) Validate() error {
	switch {
	case o.Reader == nil || o.Index == nil || o.UIDs == nil:
		return errors.New("last: Options.Reader, Index and UIDs are required")
	case o.NoSpanHours < 0 || o.MaxBackScan < 1 || o.MaxSeries < 1 || o.Parallelism < 1:
		return errors.New("last: NoSpanHours must be >= 0, MaxBackScan, MaxSeries and Parallelism >= 1")
	}
	return nil
}

// Service answers /api/query/last. It is safe for concurrent use.
type Service struct {
	opts   Options
	layout rowkey.Layout
}

// New returns a Service.
func New(opts *Options) (*Service, error) {
	o := *opts
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	return &Service{opts: o, layout: o.Reader.Layout()}, nil
}

// Point is one series' last point.
type Point struct {
	series.Point
	// TSUID is the series' TSUID (raw bytes).
	TSUID string
	// Metric and Tags are set when the query asked to resolve names; Tags
	// are sorted by key.
	Metric string
	Tags   []Tag
}

// Last returns the last point of every series the query selects that has
// one in its search range, in sub-query order then series id order, each
// series once. Unknown names and malformed TSUIDs are *tsquery.Error
// (400); too many series a *read.LimitError.
func (s *Service) Last(ctx context.Context, q *Query) ([]Point, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.BackScan > s.opts.MaxBackScan {
		return nil, badRequest(fmt.Sprintf("back_scan %d is more than the limit of %d hours", q.BackScan, s.opts.MaxBackScan))
	}
	sel, err := s.selectSeries(ctx, q)
	if err != nil {
		return nil, err
	}
	pts, err := s.search(ctx, sel, q.BackScan)
	if err != nil || !q.ResolveNames {
		return pts, err
	}
	for i := range pts {
		if err := s.resolve(ctx, &pts[i]); err != nil {
			return nil, err
		}
	}
	return pts, nil
}

// selectSeries lists the series of every sub-query, each once.
func (s *Service) selectSeries(ctx context.Context, q *Query) ([]index.Series, error) {
	var out []index.Series
	seen := map[string]bool{}
	add := func(x index.Series) error {
		if seen[x.TSUID] {
			return nil
		}
		seen[x.TSUID] = true
		out = append(out, x)
		if len(out) > s.opts.MaxSeries {
			return &read.LimitError{Limit: "series", Max: int64(s.opts.MaxSeries)}
		}
		return nil
	}
	for i := range q.Queries {
		sq := &q.Queries[i]
		var err error
		switch {
		case len(sq.TSUIDs) > 0:
			err = s.byTSUIDs(sq.TSUIDs, q.BackScan > 0, add)
		case q.BackScan > 0:
			err = s.byExactTags(ctx, sq, add)
		default:
			err = s.byMetric(ctx, sq, add)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// byTSUIDs adds the series of hex TSUIDs. A TSUID the index does not know
// is still searched with back_scan (its rows may predate the index), and
// skipped without.
func (s *Service) byTSUIDs(hexes []string, backScan bool, add func(index.Series) error) error {
	for _, h := range hexes {
		b, err := rowkey.AppendParseTSUIDHex(nil, h)
		if err == nil {
			_, _, err = s.layout.ParseTSUID(b)
		}
		if err != nil {
			return &tsquery.Error{Msg: "Invalid TSUID: " + h, Details: err.Error(), Err: err}
		}
		x := index.Series{TSUID: string(b)}
		if id, ok := s.opts.Index.Lookup(b); ok {
			x, _ = s.opts.Index.Series(id)
		} else if !backScan {
			continue
		}
		if err := add(x); err != nil {
			return err
		}
	}
	return nil
}

// byMetric adds the series of the metric having every tag of sq (they may
// have more), as OpenTSDB's meta-table scan (getLastWriteTimes) does
// without a back_scan.
func (s *Service) byMetric(ctx context.Context, sq *SubQuery, add func(index.Series) error) error {
	m, err := s.lookup(ctx, uid.Metric, sq.Metric)
	if err != nil {
		return err
	}
	filters := make([]index.Filter, 0, len(sq.Tags))
	for _, t := range sq.Tags {
		k, err := s.lookup(ctx, uid.TagK, t.Key)
		if err != nil {
			return err
		}
		if _, err := s.lookup(ctx, uid.TagV, t.Value); err != nil {
			return err
		}
		filters = append(filters, index.Filter{TagK: k, Type: index.LiteralOr, Values: []string{t.Value}})
	}
	b, err := s.opts.Index.Postings(ctx, m, filters)
	if err != nil {
		return err
	}
	var addErr error
	s.opts.Index.ForEach(b, func(x index.Series) bool {
		addErr = add(x)
		return addErr == nil
	})
	return addErr
}

// byExactTags adds the one series whose tags are exactly sq's, as
// OpenTSDB's TSUIDQuery.getLastPoint does with a back_scan: it builds the
// TSUID from the names (tsuidFromMetric) and reads that series' rows, so
// a series with more tags than given is not found, and no tags at all is
// a 400. The TSUID is searched whether or not the index knows it.
func (s *Service) byExactTags(ctx context.Context, sq *SubQuery, add func(index.Series) error) error {
	if len(sq.Tags) == 0 {
		return badRequest("Tags cannot be null or empty when getting a TSUID")
	}
	w := s.layout.Widths
	m, err := s.lookup(ctx, uid.Metric, sq.Metric)
	if err != nil {
		return err
	}
	tags := make([]rowkey.Tag, 0, len(sq.Tags))
	for _, t := range sq.Tags {
		k, err := s.lookup(ctx, uid.TagK, t.Key)
		if err != nil {
			return err
		}
		v, err := s.lookup(ctx, uid.TagV, t.Value)
		if err != nil {
			return err
		}
		tags = append(tags, rowkey.Tag{Key: uid.AppendID(nil, k, w.TagK), Value: uid.AppendID(nil, v, w.TagV)})
	}
	b, err := s.layout.AppendTSUID(nil, uid.AppendID(nil, m, w.Metric), tags)
	if err != nil {
		return badRequest(err.Error())
	}
	x := index.Series{TSUID: string(b)}
	if id, ok := s.opts.Index.Lookup(b); ok {
		x, _ = s.opts.Index.Series(id)
	}
	return add(x)
}

// lookup resolves a name; an unknown one is OpenTSDB's 400.
func (s *Service) lookup(ctx context.Context, k uid.Kind, name string) (uid.ID, error) {
	id, err := s.opts.UIDs.Lookup(ctx, k, []byte(name))
	if errors.Is(err, uid.ErrNoSuchName) {
		return 0, &tsquery.Error{Msg: err.Error(), Err: err}
	}
	return id, err
}

// search finds each series' last point with Parallelism workers, each
// taking the next series in turn (long-lived workers keep their grown
// stacks: the store's iterators are deep).
func (s *Service) search(ctx context.Context, sel []index.Series, backScan int) ([]Point, error) {
	found := make([]Point, len(sel))
	ok := make([]bool, len(sel))
	errs := make([]error, len(sel))
	now := s.opts.Now().UnixMilli()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(s.opts.Parallelism, len(sel)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(sel); i = int(next.Add(1) - 1) {
				start, end := s.searchRange(&sel[i], backScan, now)
				var p series.Point
				p, ok[i], errs[i] = s.opts.Reader.Last(ctx, sel[i], start, end)
				found[i] = Point{Point: p, TSUID: sel[i].TSUID}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := found[:0]
	for i := range found {
		if ok[i] {
			out = append(out, found[i])
		}
	}
	return out, nil
}

// searchRange is the range searched for x: back_scan hours before the
// current hour, else the series' span in the index up to the current hour,
// else NoSpanHours.
func (s *Service) searchRange(x *index.Series, backScan int, now int64) (start, end int64) {
	cur := now - now%hourMs
	switch {
	case backScan > 0:
		return max(0, cur-int64(backScan)*hourMs), cur + hourMs - 1
	case x.HasSpan:
		// The span's last hour runs up to the index's LastSlack ahead of
		// the data; hours after the current one hold nothing unless the
		// series is written ahead of the clock, so they are not read.
		start, end = x.First*1000, x.Last*1000+hourMs-1
		if capped := min(end, cur+hourMs-1); capped >= start {
			end = capped
		}
		return start, end
	}
	return max(0, cur-int64(s.opts.NoSpanHours)*hourMs), cur + hourMs - 1
}

// resolve fills p's metric and tag names from its TSUID.
func (s *Service) resolve(ctx context.Context, p *Point) error {
	metric, tags, err := s.layout.ParseTSUID([]byte(p.TSUID))
	if err != nil {
		return err
	}
	w := s.layout.Widths
	if p.Metric, err = s.name(ctx, uid.Metric, metric); err != nil {
		return err
	}
	for ; len(tags) > 0; tags = tags[w.TagK+w.TagV:] {
		k, err := s.name(ctx, uid.TagK, tags[:w.TagK])
		if err != nil {
			return err
		}
		v, err := s.name(ctx, uid.TagV, tags[w.TagK:w.TagK+w.TagV])
		if err != nil {
			return err
		}
		p.Tags = append(p.Tags, Tag{Key: k, Value: v})
	}
	sortTags(p.Tags)
	return nil
}

func (s *Service) name(ctx context.Context, k uid.Kind, b []byte) (string, error) {
	id, _, err := uid.ParseID(b, len(b))
	if err != nil {
		return "", err
	}
	return s.opts.UIDs.Name(ctx, k, id)
}

// FormatValue writes a value as OpenTSDB's last-point JSON does (Java's
// Long.toString or Double.toString; a 4-byte float is widened first).
func FormatValue(p series.Point) string {
	if p.Kind == series.Int {
		return strconv.FormatInt(p.Int(), 10)
	}
	return javaDouble(p.Float())
}
