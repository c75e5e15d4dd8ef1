package opentsdb

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// selection is a resolved sub-query: its metric, the series to read and
// the tag keys it groups by.
type selection struct {
	metric       string
	metricID     uid.ID
	series       []index.Series
	metricSeries int      // series of the metric in the window, for the planner
	groupBy      []uid.ID // group-by tag keys, ascending
}

// badName turns a name or UID lookup failure into a 400 carrying
// OpenTSDB's message; other errors pass through.
func badName(err error) error {
	var nn *uid.NoSuchNameError
	var ni *uid.NoSuchIDError
	switch {
	case errors.As(err, &nn):
		return &tsquery.Error{Msg: nn.Error(), Details: nn.Error(), Err: err}
	case errors.As(err, &ni):
		return &tsquery.Error{Msg: ni.Error(), Details: ni.Error(), Err: err}
	}
	return err
}

// resolve selects the series of sq in the window [start, end] ms.
func (x *executor) resolve(ctx context.Context, sq *tsquery.SubQuery, start, end int64) (*selection, error) {
	if len(sq.TSUIDs) > 0 {
		return x.resolveTSUIDs(ctx, sq)
	}
	e := x.e
	mid, err := e.opts.UIDs.Lookup(ctx, uid.Metric, []byte(sq.Metric))
	if err != nil {
		return nil, badName(err)
	}
	sel := &selection{metric: sq.Metric, metricID: mid}
	filters, err := x.indexFilters(ctx, sq, sel)
	if err != nil {
		return nil, err
	}
	b, err := e.opts.Index.Postings(ctx, mid, filters)
	if err != nil {
		return nil, &tsquery.Error{Msg: err.Error(), Err: err}
	}
	if sq.ExplicitTags {
		e.opts.Index.ExplicitTags(b, filterKeys(filters))
	}
	e.opts.Index.RestrictTime(b, start, end)
	sel.metricSeries = x.metricSeries(ctx, mid, filters, b, start, end)
	sel.series = x.collect(b, sel.series[:0])
	return sel, nil
}

// metricSeries counts the metric's series in the window, the planner's
// cost of a scan: b itself when nothing filtered it. Restricting the
// metric's series to the window visits each of them, so it is done only
// when the metric is within a few times the selection; a larger metric is
// counted whole, which can only overstate the scan's cost where the
// per-series plan is the cheaper one anyway (a filter picking 10 series of
// 100,000 plans in microseconds, not in a pass over the 100,000).
func (x *executor) metricSeries(ctx context.Context, mid uid.ID, filters []index.Filter, b *roaring.Bitmap, start, end int64) int {
	if len(filters) == 0 {
		return int(b.GetCardinality())
	}
	all, err := x.e.opts.Index.Postings(ctx, mid, nil)
	if err != nil {
		return 0 // unknown: the planner guesses
	}
	if n := all.GetCardinality(); n > 4*max(b.GetCardinality(), 64) {
		return int(n)
	}
	x.e.opts.Index.RestrictTime(all, start, end)
	return int(all.GetCardinality())
}

// collect appends the series of b.
func (x *executor) collect(b *roaring.Bitmap, dst []index.Series) []index.Series {
	x.e.opts.Index.ForEach(b, func(s index.Series) bool {
		dst = append(dst, s)
		return true
	})
	return dst
}

func filterKeys(fs []index.Filter) []uid.ID {
	keys := make([]uid.ID, len(fs))
	for i, f := range fs {
		keys[i] = f.TagK
	}
	return keys
}

// indexFilters resolves the sub-query's filters and records its group-by
// keys in sel.
func (x *executor) indexFilters(ctx context.Context, sq *tsquery.SubQuery, sel *selection) ([]index.Filter, error) {
	out := make([]index.Filter, 0, len(sq.Filters))
	for _, f := range sq.Filters {
		k, err := x.e.opts.UIDs.Lookup(ctx, uid.TagK, []byte(f.Tagk))
		if err != nil {
			return nil, badName(err)
		}
		typ, err := index.ParseFilterType(f.Type)
		if err != nil {
			return nil, &tsquery.Error{Msg: "Could not find a tag value filter of the type: " + f.Type, Err: err}
		}
		xf := index.Filter{TagK: k, Type: typ, Pattern: f.Filter, GroupBy: f.GroupBy}
		if xf.Values, err = x.literals(ctx, f, typ); err != nil {
			return nil, err
		}
		if f.GroupBy && !slices.Contains(sel.groupBy, k) {
			sel.groupBy = append(sel.groupBy, k)
		}
		out = append(out, xf)
	}
	slices.Sort(sel.groupBy)
	return out, nil
}

// literals splits a literal filter's values and, for literal_or, checks
// that each names a tag value, as OpenTSDB resolves them before the scan.
func (x *executor) literals(ctx context.Context, f tsquery.Filter, typ index.FilterType) ([]string, error) {
	switch typ {
	case index.LiteralOr, index.ILiteralOr, index.NotLiteralOr, index.NotILiteralOr:
	default:
		return nil, nil
	}
	vals := strings.Split(f.Filter, "|")
	for len(vals) > 1 && vals[len(vals)-1] == "" {
		vals = vals[:len(vals)-1] // Java's split drops trailing empties
	}
	if typ != index.LiteralOr || x.e.opts.SkipUnresolvedTagVs {
		return vals, nil
	}
	for _, v := range vals {
		if _, err := x.e.opts.UIDs.Lookup(ctx, uid.TagV, []byte(v)); err != nil {
			return nil, badName(err)
		}
	}
	return vals, nil
}

// resolveTSUIDs selects the series a tsuid= sub-query names; they must
// share one metric. A TSUID the index does not know is still read, over
// every hour of the window.
func (x *executor) resolveTSUIDs(ctx context.Context, sq *tsquery.SubQuery) (*selection, error) {
	e, w := x.e, x.e.opts.Reader.Layout().Widths
	sel := &selection{}
	seen := map[string]bool{}
	for _, h := range sq.TSUIDs {
		raw, err := rowkey.AppendParseTSUIDHex(nil, h)
		if err == nil && (len(raw) < w.Metric || (len(raw)-w.Metric)%(w.TagK+w.TagV) != 0) {
			err = errors.New("wrong length for the UID widths")
		}
		if err != nil {
			return nil, &tsquery.Error{Msg: "Invalid TSUID: " + h, Details: err.Error(), Err: err}
		}
		mid, _, _ := uid.ParseID(raw, w.Metric)
		if len(sel.series) == 0 {
			sel.metricID = mid
		} else if mid != sel.metricID {
			// TsdbQuery.configureFromQuery's message, metric UIDs in hex.
			first := rowkey.AppendTSUIDHex(nil, uid.AppendID(nil, sel.metricID, w.Metric))
			return nil, &tsquery.Error{Msg: "One or more TSUIDs did not share the same metric [" + string(first) +
				"] [" + string(rowkey.AppendTSUIDHex(nil, raw[:w.Metric])) + "]"}
		}
		if seen[string(raw)] {
			continue
		}
		seen[string(raw)] = true
		sel.series = append(sel.series, x.indexSeries(raw))
	}
	name, err := e.opts.UIDs.Name(ctx, uid.Metric, sel.metricID)
	if err != nil {
		return nil, badName(err)
	}
	sel.metric = name
	return sel, nil
}

// indexSeries returns the index's entry for tsuid, or one with unknown
// hours.
func (x *executor) indexSeries(tsuid []byte) index.Series {
	ix := x.e.opts.Index
	if id, ok := ix.Lookup(tsuid); ok {
		if s, ok := ix.Series(id); ok {
			return s
		}
	}
	return index.Series{TSUID: string(tsuid)}
}
