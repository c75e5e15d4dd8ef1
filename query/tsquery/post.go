package tsquery

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// wireQuery is the POST body as Jackson would bind it to TSQuery.
type wireQuery struct {
	Start             flexString              `json:"start"`
	End               flexString              `json:"end"`
	Timezone          flexString              `json:"timezone"`
	Options           map[string][]flexString `json:"options"`
	Padding           flexBool                `json:"padding"`
	NoAnnotations     flexBool                `json:"noAnnotations"`
	GlobalAnnotations flexBool                `json:"globalAnnotations"`
	ShowTSUIDs        flexBool                `json:"showTSUIDs"`
	MsResolution      flexBool                `json:"msResolution"`
	Ms                flexBool                `json:"ms"`
	ShowQuery         flexBool                `json:"showQuery"`
	ShowStats         flexBool                `json:"showStats"`
	ShowSummary       flexBool                `json:"showSummary"`
	Delete            flexBool                `json:"delete"`
	UseCalendar       flexBool                `json:"useCalendar"`
	Queries           []json.RawMessage       `json:"queries"`
}

// wireSub is one element of "queries", as Jackson binds TSSubQuery.
type wireSub struct {
	Aggregator           flexString            `json:"aggregator"`
	Metric               flexString            `json:"metric"`
	TSUIDs               []flexString          `json:"tsuids"`
	Downsample           flexString            `json:"downsample"`
	Rate                 flexBool              `json:"rate"`
	RateOptions          *wireRate             `json:"rateOptions"`
	Tags                 map[string]flexString `json:"tags"`
	Filters              []wireFilter          `json:"filters"`
	ExplicitTags         flexBool              `json:"explicitTags"`
	Percentiles          []flexFloat           `json:"percentiles"`
	RollupUsage          flexString            `json:"rollupUsage"`
	PreAggregate         flexBool              `json:"preAggregate"`
	ShowHistogramBuckets flexBool              `json:"showHistogramBuckets"`
	UseFuzzyFilter       flexBool              `json:"useFuzzyFilter"`
	UseMultiGets         flexBool              `json:"useMultiGets"`
}

type wireRate struct {
	Counter    flexBool `json:"counter"`
	CounterMax flexInt  `json:"counterMax"`
	ResetValue flexInt  `json:"resetValue"`
	DropResets flexBool `json:"dropResets"`
}

type wireFilter struct {
	Type     flexString `json:"type"`
	Tagk     flexString `json:"tagk"`
	Filter   flexString `json:"filter"`
	GroupBy  flexBool   `json:"groupBy"`
	GroupBy2 flexBool   `json:"group_by"`
}

// ParsePOST parses an /api/query POST body
// (HttpJsonSerializer.parseQueryV1) and drops sub-queries equal to an
// earlier one. The result still needs Validate.
func ParsePOST(body []byte) (*TSQuery, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &Error{Msg: "Missing message content",
			Details: "Supply valid JSON formatted data in the body of your request"}
	}
	var w wireQuery
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, unparsable(err)
	}
	q := w.query()
	for _, raw := range w.Queries {
		sq, err := decodeSub(raw)
		if err != nil {
			return nil, unparsable(err)
		}
		q.Queries = append(q.Queries, sq)
	}
	q.Queries = dedupe(q.Queries)
	return q, nil
}

func unparsable(err error) *Error {
	return &Error{Msg: "Unable to parse the given JSON", Details: err.Error(), Err: err}
}

func (w *wireQuery) query() *TSQuery {
	q := &TSQuery{
		Start: w.Start.s, End: w.End.s, Timezone: w.Timezone.s,
		Padding: w.Padding.b, NoAnnotations: w.NoAnnotations.b, GlobalAnnotations: w.GlobalAnnotations.b,
		ShowTSUIDs: w.ShowTSUIDs.b, MsResolution: w.MsResolution.b || w.Ms.b, ShowQuery: w.ShowQuery.b,
		ShowStats: w.ShowStats.b, ShowSummary: w.ShowSummary.b, Delete: w.Delete.b, UseCalendar: w.UseCalendar.b,
	}
	for k, vs := range w.Options {
		if q.Options == nil {
			q.Options = map[string][]string{}
		}
		q.Options[k] = strs(vs)
	}
	return q
}

func strs(vs []flexString) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.s
	}
	return out
}

// decodeSub reads one sub-query; "tags" and "filters" replace each other
// in body order, as Jackson's setter calls do.
func decodeSub(raw json.RawMessage) (*SubQuery, error) {
	w := wireSub{UseFuzzyFilter: flexBool{true, false}, UseMultiGets: flexBool{true, false}}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	sq := &SubQuery{
		Aggregator: w.Aggregator.s, Metric: w.Metric.s, TSUIDs: strs(w.TSUIDs), Downsample: w.Downsample.s,
		Rate: w.Rate.b, ExplicitTags: w.ExplicitTags.b, PreAggregate: w.PreAggregate.b,
		ShowHistogramBuckets: w.ShowHistogramBuckets.b, UseFuzzyFilter: w.UseFuzzyFilter.b, UseMultiGets: w.UseMultiGets.b,
	}
	if w.RollupUsage.set {
		sq.RollupUsage = ParseRollupUsage(w.RollupUsage.s)
	}
	if w.RateOptions != nil {
		sq.RateOptions = w.RateOptions.options()
	}
	for _, p := range w.Percentiles {
		sq.Percentiles = append(sq.Percentiles, p.v)
	}
	slices.Sort(sq.Percentiles)
	var err error
	if w.Tags != nil && (w.Filters == nil || lastKey(raw, "filters", "tags") == 1) {
		sq.Filters, err = tagsToFilters(w.Tags)
	} else {
		sq.Filters, err = w.filters()
	}
	return sq, err
}

func (w *wireRate) options() *RateOptions {
	r := DefaultRateOptions()
	r.Counter, r.DropResets = w.Counter.b, w.DropResets.b
	if w.CounterMax.set {
		r.CounterMax = w.CounterMax.v
	}
	if w.ResetValue.set {
		r.ResetValue = w.ResetValue.v
	}
	return &r
}

func (w *wireSub) filters() ([]Filter, error) {
	var out []Filter
	for _, wf := range w.Filters {
		f, err := NewFilter(wf.Type.s, wf.Tagk.s, wf.Filter.s, wf.GroupBy.b || wf.GroupBy2.b)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// tagsToFilters turns the deprecated "tags" map into group-by filters
// (TagVFilter.tagsToFilters), in key order.
func tagsToFilters(tags map[string]flexString) ([]Filter, error) {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	var out []Filter
	for _, k := range keys {
		f, err := shorthandFilter(k, tags[k].s, true)
		if err != nil {
			return nil, err
		}
		out = appendFilter(out, f)
	}
	return out, nil
}
