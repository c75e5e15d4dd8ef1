package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// RollupOptions let a Writer store externally computed rollups and
// pre-aggregates (/api/rollup and telnet rollup), as OpenTSDB 2.4's
// TSDB.addAggregatePoint does: straight into the rollup and
// pre-aggregation tables, acknowledged once stored.
type RollupOptions struct {
	// Config is the rollup configuration. Nil refuses every rollup point
	// ("No rollup or aggregations were configured").
	Config *rollup.Config
	// Tables holds every table Config names, by name (the default
	// interval's table is the data table).
	Tables map[string]storage.Table
	// Layout is the tables' key layout. Required with Config.
	Layout *rowkey.Layout
	// Format is the store's write format; rollup columns are OpenTSDB's in
	// both (tsd computes its own cells into the packed column).
	Format schema.Format
	// TagRaw adds AggTagKey=RawAggTagValue to rollups of raw series
	// (tsd.rollups.tag_raw).
	TagRaw bool
	// AggTagKey names the pre-aggregate tag (tsd.rollups.agg_tag_key).
	// Default "_aggregate".
	AggTagKey string
	// RawAggTagValue is its value for raw series
	// (tsd.rollups.raw_agg_tag_value). Default "RAW".
	RawAggTagValue string
	// BlockDerived refuses avg and dev as rollup or group-by aggregators
	// (tsd.rollups.block_derived).
	BlockDerived bool
	// Registrar puts new series in the series index so queries find
	// them; the head's registrar. Default none.
	Registrar head.SeriesRegistrar
	// Changes is marked after every stored rollup point, for the caches
	// of query answers (internal/changes). Default nil.
	Changes *changes.Tracker
}

// RollupSpec is what a rollup point says beyond a put: its interval and
// rollup aggregator (a rollup), its group-by aggregator (a pre-aggregate),
// or both (a rolled-up pre-aggregate).
type RollupSpec struct {
	Interval, Agg, GroupBy []byte
	// IsGroupBy says a group-by aggregator was given (even empty).
	IsGroupBy bool
	// RawTimestamp is the timestamp as sent, seconds or milliseconds.
	RawTimestamp int64
}

// ParseRollupSpec reads telnet's "<interval>-<agg>", "<groupby>" or
// "<interval>-<agg>:<groupby>" word as RollupDataPointRpc does.
func ParseRollupSpec(word []byte) RollupSpec {
	var s RollupSpec
	first, second, colon := strings.Cut(string(word), ":")
	// Java's split(":") drops trailing empty parts: "1h-sum:" has one part.
	if second == "" {
		colon = false
	}
	if dash := strings.IndexByte(first, '-'); dash >= 0 {
		s.Interval, s.Agg = []byte(first[:dash]), []byte(first[dash+1:])
	} else if !colon {
		s.GroupBy, s.IsGroupBy = []byte(first), true
	}
	if colon {
		s.GroupBy, s.IsGroupBy = []byte(second), true
	}
	if s.IsGroupBy && s.Agg == nil {
		s.Agg = s.GroupBy // the temporal aggregator defaults to the spatial one
	}
	return s
}

// RollupError is a rollup point OpenTSDB refuses; NoSuchRollup marks its
// NoSuchRollupForIntervalException (telnet: "rollup: No such rollup: ...";
// HTTP: "Unexpected exception"), the rest are IllegalArgumentExceptions.
type RollupError struct {
	NoSuchRollup bool
	Msg          string
}

func (e *RollupError) Error() string { return e.Msg }

func rollupIllegal(format string, args ...any) error {
	return &PointError{Err: &RollupError{Msg: fmt.Sprintf(format, args...)}}
}

// AddRollup validates and stores one rollup or pre-aggregate point now
// (no Commit: it is acknowledged once the store has it). Errors are a
// *PointError wrapping a *RollupError (OpenTSDB's message) or a naming
// error, or match ErrThrottled.
func (s *Session) AddRollup(ctx context.Context, p *parse.Point, spec *RollupSpec) error {
	if err := s.w.opts.Gate.Err(); err != nil {
		s.countThrottled(1, err)
		return &throttleError{err}
	}
	r := s.w.opts.Rollups
	if r == nil || r.Config == nil {
		return rollupIllegal("No rollup or aggregations were configured")
	}
	table, q, key, err := s.rollupCell(ctx, r, p, spec)
	if err != nil {
		return err
	}
	tbl := r.Tables[table]
	if tbl == nil {
		return rollupIllegal("no table %s", table)
	}
	if err := s.putRollup(ctx, r, tbl, key, q, p); err != nil {
		return err
	}
	s.w.stats[s.proto].Points.Add(1)
	return nil
}

// rollupCell runs OpenTSDB's checks in its order and returns the table,
// qualifier and row key of the point.
func (s *Session) rollupCell(ctx context.Context, r *RollupOptions, p *parse.Point, spec *RollupSpec) (string, []byte, []byte, error) {
	cfg, metric := r.Config, string(p.Metric)
	interval, agg, groupBy := string(spec.Interval), string(spec.Agg), string(spec.GroupBy)
	if spec.IsGroupBy && groupBy == "" {
		return "", nil, nil, rollupIllegal("Cannot write a group by data point without specifying the aggregation function. Metric=%s tags=%s", metric, javaTags(p.Tags))
	}
	ts := spec.RawTimestamp
	if ts < 0 || uint64(ts)&0xFFFFFFFF00000000 != 0 {
		word := "bad"
		if ts < 0 {
			word = "negative "
		}
		return "", nil, nil, rollupIllegal("%s timestamp=%d when trying to add value=%s to metric=%s, tags=%s",
			word, ts, parse.AppendJavaValue(nil, p.Value), metric, javaTags(p.Tags))
	}
	aggKey := r.AggTagKey
	tags := p.Tags
	ti := -1
	for i := range tags {
		if string(tags[i].Key) == aggKey {
			ti = i
		}
	}
	upper := []byte(strings.ToUpper(groupBy))
	switch {
	case ti < 0 && !spec.IsGroupBy:
		if r.TagRaw {
			tags = append(tags, uid.Tag{Key: []byte(aggKey), Value: []byte(r.RawAggTagValue)})
		}
	case ti < 0:
		tags = append(tags, uid.Tag{Key: []byte(aggKey), Value: upper})
	default:
		if !strings.EqualFold(string(tags[ti].Value), groupBy) {
			return "", nil, nil, rollupIllegal("Given tag value for %s of %s did not match the group by aggregator of %s for %s %s",
				aggKey, tags[ti].Value, groupBy, metric, javaTags(p.Tags))
		}
		tags[ti].Value = upper
	}
	if spec.IsGroupBy {
		if !rollup.KnownAggregator(strings.ToLower(groupBy)) {
			return "", nil, nil, rollupIllegal("Invalid group by aggregator %s with metric %s %s", groupBy, metric, javaTags(tags))
		}
		if u := string(upper); r.BlockDerived && (u == "AVG" || u == "DEV") {
			return "", nil, nil, rollupIllegal("Derived group by aggregations are not allowed %s with metric %s %s", groupBy, metric, javaTags(tags))
		}
	}
	var iv *rollup.Interval
	aggID := -1
	if interval != "" {
		var ok bool
		if iv, ok = cfg.ByName(interval); !ok {
			return "", nil, nil, &PointError{Err: &RollupError{NoSuchRollup: true, Msg: "No rollups configured for the interval: " + interval}}
		}
		if agg == "" {
			return "", nil, nil, rollupIllegal("Aggregator cannot be null or empty.")
		}
		if aggID, ok = cfg.AggID(agg); !ok {
			return "", nil, nil, rollupIllegal("No ID found mapping to aggregator: %s", agg)
		}
		if u := strings.ToUpper(agg); r.BlockDerived && (u == "AVG" || u == "DEV") {
			return "", nil, nil, rollupIllegal("Derived rollup aggregations are not allowed %s with metric %s %s", u, metric, javaTags(tags))
		}
	}
	if iv == nil && !spec.IsGroupBy {
		return "", nil, nil, rollupIllegal("Interval cannot be null for a non-group by point")
	}
	key, err := s.w.uids.ResolvePoint(ctx, s.rkey[:0], p.Metric, tags)
	s.rkey = key
	if err != nil {
		return "", nil, nil, s.classify(err)
	}
	w := s.w.head.Options().Widths
	head.SortSeriesKey(key, w)
	if r.Registrar != nil {
		if err := r.Registrar.RegisterSeries(key); err != nil {
			return "", nil, nil, s.classify(err)
		}
		if t, ok := r.Registrar.(head.SeriesToucher); ok {
			t.Touch(key, ts*1000-ts*1000%rowkey.RowSpanMs)
		}
	}
	row, err := r.Layout.AppendRowKeyFromTSUID(s.rrow[:0], key, ts*1000)
	s.rrow = row
	if err != nil {
		return "", nil, nil, &PointError{Err: err}
	}
	flags := rowkey.ValueFlags(p.Value)
	if iv == nil { // a pre-aggregate of the default interval: a raw column
		def := cfg.Default()
		if def == nil {
			return "", nil, nil, rollupIllegal("No default interval is configured for pre-aggregates")
		}
		q, err := rowkey.AppendQualifier(s.rq[:0], rowkey.NewQualifier(ts%rowkey.RowSpan*1000, flags))
		s.rq = q
		if err != nil {
			return "", nil, nil, &PointError{Err: err}
		}
		return def.PreAggTable, q, row, nil
	}
	base := iv.BaseTime(ts)
	rollup.SetBaseTime(r.Layout, row, base)
	q, err := rollup.AppendQualifier(s.rq[:0], aggID, iv.Index(base, ts), flags)
	s.rq = q
	if err != nil {
		return "", nil, nil, rollupIllegal("%v", err)
	}
	table := iv.Table
	if spec.IsGroupBy {
		table = iv.PreAggTable
	}
	return table, q, row, nil
}

// putRollup writes the point's column; a store failure is a throttle.
func (s *Session) putRollup(ctx context.Context, r *RollupOptions, tbl storage.Table, row, q []byte, p *parse.Point) error {
	s.rval = rowkey.AppendValue(s.rval[:0], p.Value)
	cell := []storage.Cell{{Family: schema.DataFamily, Qualifier: q, Timestamp: time.Now().UnixMilli() * 1000, Value: s.rval}}
	if err := tbl.Put(ctx, row, cell); err != nil {
		if errors.Is(err, storage.ErrInvalidArgument) {
			return &PointError{Err: err}
		}
		s.countThrottled(1, err)
		return &throttleError{err}
	}
	if r.Changes != nil {
		// A rollup cell stands for a span of its interval, which any
		// query over it may read: rollup writes are rare enough to mark
		// everything rather than work the span out.
		r.Changes.MarkAll()
	}
	return nil
}

// javaTags prints tags as Java prints a HashMap of them: {k=v, k2=v2} in
// the map's iteration order. Only refused points pay for it.
func javaTags(tags []uid.Tag) string {
	b := []byte{'{'}
	var scratch []int
	for i, j := range parse.JavaHashMapOrder(tags, &scratch) {
		t := tags[j]
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t.Key...)
		b = append(b, '=')
		b = append(b, t.Value...)
	}
	return string(append(b, '}'))
}
