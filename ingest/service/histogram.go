package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// HistogramOptions let a Writer store OpenTSDB 2.4 histogram points
// (/api/histogram and telnet histogram) as TSDB.addHistogramPoint does:
// one cell each in the series' hour row of the data table, in OpenTSDB's
// bytes whatever the store's format, written straight to the store and
// acknowledged once it has them. They bypass the head and its log: the
// store's write is durable when it returns (Pebble syncs every batch,
// Bigtable acknowledges replicated writes), so a histogram acknowledged
// survives kill -9 with nothing to replay, and the flusher and compactor
// never touch histogram cells.
type HistogramOptions struct {
	// Codecs is tsd.core.histograms.config. Nil disables histograms:
	// every histogram point is refused with ErrHistogramsDisabled.
	Codecs *hist.Codecs
	// Table is the data table. Required with Codecs.
	Table storage.Table
	// Layout is its key layout. Required with Codecs.
	Layout *rowkey.Layout
	// Registrar puts new series in the series index and notes their hours
	// so queries find them; the head's registrar. Default none.
	Registrar head.SeriesRegistrar
	// Changes is marked with each stored point's time, for the caches of
	// query answers (internal/changes). Default nil.
	Changes *changes.Tracker
}

// ErrHistogramsDisabled is HistogramDataPointRpc's refusal when no codec
// table is configured.
var ErrHistogramsDisabled = errors.New("Histogram storage has not been enabled. Check the 'tsd.core.histograms.config' configuration.")

// HistogramError is a histogram OpenTSDB refuses after parsing it: a
// value that does not decode, an unknown codec id, a histogram too short
// to read back.
type HistogramError struct{ Msg string }

func (e *HistogramError) Error() string { return e.Msg }

// HistogramsStored returns the number of histogram points the Writer
// stored, across protocols (also counted in each protocol's Points).
func (w *Writer) HistogramsStored() int64 { return w.histograms.Load() }

// HistogramsEnabled reports whether a codec table is configured.
func (w *Writer) HistogramsEnabled() bool {
	return w.opts.Histograms != nil && w.opts.Histograms.Codecs != nil
}

// HistogramCodecs returns the configured codec table, nil when disabled.
func (w *Writer) HistogramCodecs() *hist.Codecs {
	if !w.HistogramsEnabled() {
		return nil
	}
	return w.opts.Histograms.Codecs
}

// AddHistogram stores one histogram point now (no Commit): p gives its
// metric, tags and time (p.Value.T in ms, p.Value.Ms for a millisecond
// timestamp on a whole second); h its buckets, h.ID its codec. Errors are
// a *PointError (wrapping a *HistogramError, a naming error or
// ErrHistogramsDisabled) or match ErrThrottled.
func (s *Session) AddHistogram(ctx context.Context, p *parse.Point, h *hist.Histogram) error {
	if err := s.w.opts.Gate.Err(); err != nil {
		s.countThrottled(1, err)
		return &throttleError{err}
	}
	o := s.w.opts.Histograms
	if o == nil || o.Codecs == nil {
		return &PointError{Err: ErrHistogramsDisabled}
	}
	if err := o.Codecs.Check(int(h.ID)); err != nil {
		s.w.stats[s.proto].Bad.Add(1)
		return &PointError{Err: &HistogramError{Msg: hist.Message(err)}}
	}
	s.rval = h.AppendEncoded(s.rval[:0], true)
	if len(s.rval) < hist.MinEncodedBytes {
		s.w.stats[s.proto].Bad.Add(1)
		return &PointError{Err: &HistogramError{Msg: fmt.Sprintf(
			"a histogram of %d bytes cannot be read back (at least %d): give it a bucket", len(s.rval), hist.MinEncodedBytes)}}
	}
	ts := p.Value.T
	key, err := s.w.uids.ResolvePoint(ctx, s.rkey[:0], p.Metric, p.Tags)
	s.rkey = key
	if err != nil {
		return s.classify(err)
	}
	head.SortSeriesKey(key, s.w.head.Options().Widths)
	base := ts - ts%rowkey.RowSpanMs
	if o.Registrar != nil {
		if err := o.Registrar.RegisterSeries(key); err != nil {
			return s.classify(err)
		}
		if t, ok := o.Registrar.(head.SeriesToucher); ok {
			t.Touch(key, base)
		}
	}
	row, err := o.Layout.AppendRowKeyFromTSUID(s.rrow[:0], key, ts)
	s.rrow = row
	if err != nil {
		return &PointError{Err: err}
	}
	q, err := hist.AppendQualifier(s.rq[:0], ts-base, p.Value.Ms)
	s.rq = q
	if err != nil {
		return &PointError{Err: err}
	}
	cell := []storage.Cell{{Family: schema.DataFamily, Qualifier: q, Timestamp: time.Now().UnixMilli() * 1000, Value: s.rval}}
	if err := o.Table.Put(ctx, row, cell); err != nil {
		if errors.Is(err, storage.ErrInvalidArgument) {
			return &PointError{Err: err}
		}
		s.countThrottled(1, err)
		return &throttleError{err}
	}
	if o.Changes != nil {
		o.Changes.Mark(ts, ts)
	}
	s.w.stats[s.proto].Points.Add(1)
	s.w.histograms.Add(1)
	return nil
}

// AddHistogramJSON builds the histogram of an /api/histogram data point
// (HistogramFromJSON) and stores it (AddHistogram); a histogram that
// cannot be built is a *PointError with OpenTSDB's message.
func (s *Session) AddHistogramJSON(ctx context.Context, p *parse.Point, f putjson.HistogramFields) error {
	if err := s.w.HistogramFromJSON(&s.hist, f); err != nil {
		s.w.stats[s.proto].Bad.Add(1)
		return &PointError{Err: err}
	}
	return s.AddHistogram(ctx, p, &s.hist)
}

// HistogramFromJSON builds the histogram of an /api/histogram data point
// into h as PutDataPointRpc does: from value (base64 codec bytes without
// the id, decoded by codec f.ID) when it is given, else from buckets
// ("lo,hi": count), underflow and overflow as a simple histogram. Errors
// carry OpenTSDB's detail message: "Unable to parse value to a number"
// for a bound that is not a float, "Unable to parse bucket bounds: k", a
// codec or decoding message, ErrHistogramsDisabled.
func (w *Writer) HistogramFromJSON(h *hist.Histogram, f putjson.HistogramFields) error {
	codecs := w.HistogramCodecs()
	if codecs == nil {
		return ErrHistogramsDisabled
	}
	if len(f.Value) > 0 {
		raw, err := decodeBase64(string(f.Value))
		if err != nil {
			return err
		}
		if err := codecs.DecodeRaw(h, int(f.ID), raw); err != nil {
			return errors.New(hist.Message(err))
		}
		return nil
	}
	simple, ok := codecs.SimpleID()
	if !ok {
		return errors.New("No codec ID assigned to class class " + hist.SimpleCodec)
	}
	h.Reset(simple)
	h.Underflow, h.Overflow = f.Underflow, f.Overflow
	var m map[string]json.RawMessage
	if err := json.Unmarshal(f.Buckets, &m); err != nil {
		return errors.New(`Invalid type for "buckets": expected an object of "lo,hi": count`)
	}
	for key, v := range m {
		bounds := strings.Split(key, ",")
		if len(bounds) != 2 {
			return errors.New("Unable to parse bucket bounds: " + key)
		}
		lo, err1 := hist.JavaParseFloat(bounds[0])
		hi, err2 := hist.JavaParseFloat(bounds[1])
		n, err3 := bucketCount(v)
		if err1 != nil || err2 != nil || err3 != nil {
			return errors.New("Unable to parse value to a number")
		}
		if len(h.Buckets) >= hist.MaxBuckets {
			return fmt.Errorf("more than %d buckets", hist.MaxBuckets)
		}
		h.Set(lo, hi, n)
	}
	return nil
}

// bucketCount reads a bucket's count as Jackson reads a Long: an
// integer, a number with a fraction (truncated) or a string of digits.
func bucketCount(v json.RawMessage) (int64, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return hist.JavaParseLong(s)
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, err
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || f != f || f >= 1<<63 || f < -(1<<63) {
		return 0, errors.New("not a long")
	}
	return int64(f), nil
}
