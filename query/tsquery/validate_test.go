package tsquery

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/agg"
)

func sub(agg, metric, ds string) *SubQuery {
	sq := NewSubQuery()
	sq.Aggregator, sq.Metric, sq.Downsample = agg, metric, ds
	return sq
}

func TestValidate(t *testing.T) {
	q := &TSQuery{Start: "1h-ago", Queries: []*SubQuery{sub("sum", "a", ""), sub("avg", "b", "5m-max-zero")}}
	if err := q.Validate(ValidateOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if q.StartTime != now-3600000 || q.EndTime != now {
		t.Errorf("range %d %d", q.StartTime, q.EndTime)
	}
	a, b := q.Queries[0], q.Queries[1]
	if a.Index != 0 || b.Index != 1 || a.Agg.Name() != "sum" || a.DS != nil || b.DS == nil ||
		b.DS.Interval != 300000 || b.DS.Agg.Name() != "max" || b.DS.Fill != agg.FillZero || b.DS.Calendar {
		t.Errorf("sub-queries %+v %+v", a, b)
	}
	spec := q.Spec(b)
	s, e := agg.ScanRange(q.StartTime, q.EndTime, b.DS)
	if spec.Agg != b.Agg || spec.Downsample != b.DS || spec.QueryStart != q.StartTime || spec.Start != s || spec.End != e ||
		spec.RateOptions != agg.DefaultRateOptions() {
		t.Errorf("spec %+v", spec)
	}
}

func TestValidateCalendarAndTimezone(t *testing.T) {
	q := &TSQuery{Start: "2024/06/01", End: "2024/06/30", Timezone: "America/Denver", UseCalendar: true,
		Queries: []*SubQuery{sub("sum", "a", "1d-sum")}}
	if err := q.Validate(ValidateOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	denver, _ := time.LoadLocation("America/Denver")
	ds := q.Queries[0].DS
	if q.StartTime != time.Date(2024, 6, 1, 0, 0, 0, 0, denver).UnixMilli() || !ds.Calendar ||
		ds.CalendarUnit != agg.Day || ds.Location.String() != "America/Denver" {
		t.Errorf("start %d, ds %+v", q.StartTime, ds)
	}
}

func TestValidateErrors(t *testing.T) {
	withRate := sub("sum", "m", "")
	withRate.Rate = true
	hist := func(agg, ds string, p ...float32) *SubQuery {
		sq := sub(agg, "m", ds)
		sq.Percentiles = p
		return sq
	}
	tsuids := sub("sum", "", "")
	tsuids.TSUIDs = []string{"000001000001000001"}
	for _, tc := range []struct {
		q   TSQuery
		msg string
	}{
		{TSQuery{Queries: []*SubQuery{sub("sum", "m", "")}}, "Missing start time"},
		{TSQuery{Start: "1700000000", End: "1600000000"}, "End time [1600000000000] must be greater than the start time [1700000000000]"},
		{TSQuery{Start: "1700000000", End: "1700000000"}, "End time [1700000000000] must be greater than the start time [1700000000000]"},
		{TSQuery{Start: "2h-ago"}, "Missing queries"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("", "m", "")}}, "Missing the aggregation function"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("SUM", "m", "")}}, "No such aggregation function: SUM"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("sum", "", "")}}, "Missing the metric or tsuids, provide at least one"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{tsuids}}, ""},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("sum", "m", "1m")}}, "Invalid downsampling specifier '1m': must provide at least interval and function"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("sum", "m", "1m-none")}}, "cannot use the NONE aggregator for downsampling"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{sub("sum", "m", "1m-avg-bogus")}}, "Unrecognized fill policy: bogus"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{hist("avg", "", 99)}}, "Only NONE or SUM aggregation function supported for histogram query"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{hist("sum", "1m-avg", 99)}}, "Only SUM downsampling aggregation supported for histogram query"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{hist("none", "1m-sum", 101)}}, "Invalid percentile parameters: 101.0"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{hist("none", "", -0.5)}}, "Invalid percentile parameters: -0.5"},
		{TSQuery{Start: "2h-ago", Timezone: "Mars/Olympus", Queries: []*SubQuery{sub("sum", "m", "1m-avg")}},
			"The timezone specification could not be found"},
		{TSQuery{Start: "2024/01/01", Timezone: "Mars/Olympus", Queries: []*SubQuery{sub("sum", "m", "1m-avg")}},
			"Invalid timezone name: Mars/Olympus"},
		{TSQuery{Start: "2h-ago", UseCalendar: true, Queries: []*SubQuery{sub("sum", "m", "1xh-avg")}},
			"Invalid downsampling specifier '1xh-avg': For input string: \"1x\""},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{withRate, {Aggregator: "sum", Metric: "m",
			Filters: []Filter{{Type: "bogus", Tagk: "h"}}}}}, "Could not find a tag value filter of the type: bogus"},
		{TSQuery{Start: "2h-ago", Queries: []*SubQuery{nil}}, "Missing the aggregation function"},
	} {
		err := tc.q.Validate(ValidateOptions{Now: now})
		var e *Error
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%+v: %v", tc.q, err)
		case tc.msg != "" && (!errors.As(err, &e) || e.Msg != tc.msg || !strings.HasPrefix(e.Details, "TSQuery(start_time=")):
			t.Errorf("%+v: error %#v, want %q", tc.q, err, tc.msg)
		}
	}
}

func TestStringDetails(t *testing.T) {
	q := &TSQuery{Start: "1h-ago", Queries: []*SubQuery{sub("sum", "m", "1m-avg")}}
	q.Queries[0].Filters = []Filter{lit("host", "a", true)}
	q.Queries[0].Percentiles = []float32{99.9, 50}
	want := "TSQuery(start_time=1h-ago, end_time=, subQueries[TSSubQuery(metric=m, filters=[filter_name=literal_or, " +
		"tagk=host, group_by=true, filter=a], tsuids=[], agg=sum, downsample=1m-avg, rate=false, rate_options=null, " +
		"explicit_tags=false, index=0, percentiles=[99.9, 50.0], show_histogram_buckets=false)] padding=false, " +
		"no_annotations=false, with_global_annotations=false, show_tsuids=false, ms_resolution=false, options=[])"
	if got := q.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for in, want := range map[float32]string{1: "1.0", 99.9: "99.9", 0.5: "0.5", 1e10: "1.0E10", 1.5e-5: "1.5E-5", 0: "0.0"} {
		if got := javaFloat(in); got != want {
			t.Errorf("javaFloat(%v) = %q, want %q", in, got, want)
		}
	}
}
