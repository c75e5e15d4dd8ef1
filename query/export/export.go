package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// DefaultSeriesPerVisit is Options.SeriesPerVisit's default.
const DefaultSeriesPerVisit = 1024

// flushBytes is the output buffered before a write to the writer.
const flushBytes = 256 << 10

// Options configure an Exporter.
type Options struct {
	// Reader reads the points. Required.
	Reader *read.Reader
	// Index selects a metric's series. Required.
	Index *index.Index
	// UIDs names metrics and tags. Required.
	UIDs *uid.UIDs
	// Format is the output format. Default OpenTSDB.
	Format Format
	// SeriesPerVisit bounds the series read by one Visit, and so the
	// names and rows held at once. Default 1024.
	SeriesPerVisit int
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.SeriesPerVisit == 0 {
		o.SeriesPerVisit = DefaultSeriesPerVisit
	}
	return o
}

// Validate reports the first missing or bad field.
func (o *Options) Validate() error {
	switch {
	case o.Reader == nil || o.Index == nil || o.UIDs == nil:
		return errors.New("export: Options.Reader, Index and UIDs are required")
	case o.SeriesPerVisit < 1:
		return errors.New("export: Options.SeriesPerVisit must be positive")
	case o.Format > Influx:
		return fmt.Errorf("export: unknown format %d", o.Format)
	}
	return nil
}

// Stats count what an export wrote.
type Stats struct {
	Series, Points int64
	// Skipped counts points the format cannot hold (NaN in Influx).
	Skipped int64
}

// Exporter writes metrics' points. Safe for concurrent use by one
// writer's owner: each Metric call writes to its own writer.
type Exporter struct {
	opts Options
}

// New returns an Exporter.
func New(opts *Options) (*Exporter, error) {
	o := *opts
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	return &Exporter{opts: o}, nil
}

// Metric writes every point of the metric's series that pass filters
// (index filters, resolved by the caller) with start <= T <= end (ms) to w.
// The stats count what was written before an error.
func (e *Exporter) Metric(ctx context.Context, w io.Writer, metric string, filters []index.Filter, start, end int64) (Stats, error) {
	var st Stats
	id, err := e.opts.UIDs.Lookup(ctx, uid.Metric, []byte(metric))
	if err != nil {
		return st, fmt.Errorf("metric %q: %w", metric, err)
	}
	bm, err := e.opts.Index.Postings(ctx, id, filters)
	if err != nil {
		return st, fmt.Errorf("metric %q: %w", metric, err)
	}
	total := int(bm.GetCardinality())
	var chunk []index.Series
	var visitErr error
	sink := &lineSink{w: w, format: e.opts.Format}
	if total > 0 {
		sink.buf = AppendHeader(sink.buf, e.opts.Format, metric)
	}
	run := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := sink.names(ctx, e.opts.UIDs, metric, chunk); err != nil {
			return err
		}
		err := e.opts.Reader.Visit(ctx, read.Selection{Series: chunk, Start: start, End: end, MetricSeries: total}, sink)
		st.Series += int64(len(chunk))
		chunk = chunk[:0]
		return err
	}
	// Series are taken from the bitmap one at a time (Index.Series), so
	// no index lock is held while a chunk is read.
	for it := bm.Iterator(); it.HasNext() && visitErr == nil; {
		s, ok := e.opts.Index.Series(index.SeriesID(it.Next()))
		if !ok || s.HasSpan && ((s.Last+3600)*1000 <= start || s.First*1000 > end) {
			continue // deleted since, or no hour of the range
		}
		if chunk = append(chunk, s); len(chunk) >= e.opts.SeriesPerVisit {
			visitErr = run()
		}
	}
	if visitErr == nil {
		visitErr = run()
	}
	if err := sink.flush(); visitErr == nil {
		visitErr = err
	}
	st.Points, st.Skipped = sink.points, sink.skipped
	return st, visitErr
}

// AppendHeader appends what format f writes before a metric's lines: a
// Prometheus "# TYPE <name> untyped" line, nothing for the others.
func AppendHeader(dst []byte, f Format, metric string) []byte {
	if f != Prometheus {
		return dst
	}
	dst = append(dst, "# TYPE "...)
	if isPromName(metric, true) {
		dst = append(dst, metric...)
	} else {
		dst = appendPromString(dst, metric)
	}
	return append(dst, " untyped\n"...)
}

// lineSink is the Visitor that writes lines: each call formats its points
// into a buffer of its own, then appends it to the shared output under
// the lock.
type lineSink struct {
	w       io.Writer
	format  Format
	texts   []seriesText // per series of the current chunk
	mu      sync.Mutex
	buf     []byte
	err     error
	points  int64
	skipped int64
	pool    sync.Pool
}

// names resolves the chunk's series' names into their line parts.
func (s *lineSink) names(ctx context.Context, u *uid.UIDs, metric string, chunk []index.Series) error {
	s.texts = s.texts[:0]
	mw, kw, vw := u.Width(uid.Metric), u.Width(uid.TagK), u.Width(uid.TagV)
	var tags []Tag
	for _, sr := range chunk {
		tags = tags[:0]
		rest := []byte(sr.TSUID)[mw:]
		for len(rest) >= kw+vw {
			k, v, err := tagName(ctx, u, rest[:kw], rest[kw:kw+vw])
			if err != nil {
				return fmt.Errorf("series %X: %w", sr.TSUID, err)
			}
			tags = append(tags, Tag{Key: k, Value: v})
			rest = rest[kw+vw:]
		}
		s.texts = append(s.texts, newSeriesText(s.format, metric, tags))
	}
	return nil
}

// tagName names a tag pair's UIDs.
func tagName(ctx context.Context, u *uid.UIDs, k, v []byte) (string, string, error) {
	kid, _, err := uid.ParseID(k, len(k))
	if err != nil {
		return "", "", err
	}
	vid, _, err := uid.ParseID(v, len(v))
	if err != nil {
		return "", "", err
	}
	kn, err := u.Name(ctx, uid.TagK, kid)
	if err != nil {
		return "", "", err
	}
	vn, err := u.Name(ctx, uid.TagV, vid)
	return kn, vn, err
}

// Points formats a row's points and appends them to the output.
func (s *lineSink) Points(i int, pts []series.Point) error {
	bp, _ := s.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	skipped := 0
	for _, p := range pts {
		var ok bool
		if b, ok = s.texts[i].appendLine(b, s.format, p); !ok {
			skipped++
		}
	}
	s.mu.Lock()
	s.buf = append(s.buf, b...)
	s.points += int64(len(pts) - skipped)
	s.skipped += int64(skipped)
	var err error
	if len(s.buf) >= flushBytes {
		err = s.flushLocked()
	}
	s.mu.Unlock()
	*bp = b
	s.pool.Put(bp)
	return err
}

// Notes ignores annotations: the text formats have no place for them.
func (s *lineSink) Notes(int, []read.Note) {}

func (s *lineSink) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

func (s *lineSink) flushLocked() error {
	if s.err != nil {
		return s.err
	}
	if len(s.buf) > 0 {
		_, s.err = s.w.Write(s.buf)
		s.buf = s.buf[:0]
	}
	return s.err
}
