package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
)

// Engine options of a Prometheus 3 server at its defaults (the flags
// query.max-samples, query.timeout, query.lookback-delta), which tsd's
// promapi also uses.
const (
	maxSamples    = 50_000_000
	queryTimeout  = 2 * time.Minute
	lookbackDelta = 5 * time.Minute
	// maxPoints is Prometheus's bound on a range query's steps per series.
	maxPoints = 11000
)

// api answers the Prometheus query endpoints from one Queryable.
type api struct {
	q   storage.Queryable
	eng *promql.Engine
}

func newAPI(q storage.Queryable) *api {
	return &api{q: q, eng: promql.NewEngine(promql.EngineOpts{
		Logger:                   slog.New(slog.DiscardHandler),
		MaxSamples:               maxSamples,
		Timeout:                  queryTimeout,
		LookbackDelta:            lookbackDelta,
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
	})}
}

func (a *api) close() { a.eng.Close() }

func (a *api) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/v1/query_range", a.handle(a.queryRange))
	m.HandleFunc("POST /api/v1/query_range", a.handle(a.queryRange))
	m.HandleFunc("GET /api/v1/query", a.handle(a.query))
	m.HandleFunc("POST /api/v1/query", a.handle(a.query))
	m.HandleFunc("GET /api/version", version)
	return m
}

// version answers tsdquery's transport floor: the cheapest JSON answer.
func version(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"version":"promserve","engine":"prometheus v0.310.0"}`))
}

// result is what a query endpoint hands back to handle: the data, or an
// error and its class, plus the warnings, and the query to close once the
// answer is encoded (its result's memory is the engine's until then).
type result struct {
	data     any
	err      *apiError
	warnings annotations.Annotations
	query    string
	closer   func()
}

func (a *api) handle(f func(*http.Request) result) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res := f(r)
		if res.closer != nil {
			defer res.closer()
		}
		if res.err != nil {
			respondError(w, res.err)
			return
		}
		respond(w, res.data, res.warnings, res.query)
	}
}

func badParam(name string, err error) result {
	return result{err: &apiError{typ: errBadData, err: fmt.Errorf("invalid parameter %q: %w", name, err)}}
}

func (a *api) queryRange(r *http.Request) result {
	start, err := parseTime(r.FormValue("start"))
	if err != nil {
		return badParam("start", err)
	}
	end, err := parseTime(r.FormValue("end"))
	if err != nil {
		return badParam("end", err)
	}
	if end.Before(start) {
		return badParam("end", errors.New("end timestamp must not be before start time"))
	}
	step, err := parseDuration(r.FormValue("step"))
	if err != nil {
		return badParam("step", err)
	}
	if step <= 0 {
		return badParam("step", errors.New("zero or negative query resolution step widths are not accepted. Try a positive integer"))
	}
	if end.Sub(start)/step > maxPoints {
		return result{err: &apiError{typ: errBadData, err: errors.New("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")}}
	}
	ctx, cancel, res := withTimeout(r)
	if res.err != nil {
		return res
	}
	defer cancel()
	qs := r.FormValue("query")
	q, err := a.eng.NewRangeQuery(ctx, a.q, queryOpts(r), qs, start, end, step)
	if err != nil {
		return badParam("query", err)
	}
	return exec(ctx, q, qs)
}

func (a *api) query(r *http.Request) result {
	ts := time.Now()
	if s := r.FormValue("time"); s != "" {
		t, err := parseTime(s)
		if err != nil {
			return badParam("time", err)
		}
		ts = t
	}
	ctx, cancel, res := withTimeout(r)
	if res.err != nil {
		return res
	}
	defer cancel()
	qs := r.FormValue("query")
	q, err := a.eng.NewInstantQuery(ctx, a.q, queryOpts(r), qs, ts)
	if err != nil {
		return badParam("query", err)
	}
	return exec(ctx, q, qs)
}

// withTimeout derives the query's context from the request and its
// timeout parameter.
func withTimeout(r *http.Request) (context.Context, context.CancelFunc, result) {
	to := r.FormValue("timeout")
	if to == "" {
		return r.Context(), func() {}, result{}
	}
	d, err := parseDuration(to)
	if err != nil {
		return nil, nil, badParam("timeout", err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return ctx, cancel, result{}
}

func queryOpts(r *http.Request) promql.QueryOpts {
	var lookback time.Duration
	if s := r.FormValue("lookback_delta"); s != "" {
		lookback, _ = parseDuration(s)
	}
	return promql.NewPrometheusQueryOpts(r.FormValue("stats") == "all", lookback)
}

func exec(ctx context.Context, q promql.Query, qs string) result {
	res := q.Exec(ctx)
	if res.Err != nil {
		return result{err: classify(res.Err), warnings: res.Warnings, closer: q.Close}
	}
	return result{
		data:     &queryData{ResultType: res.Value.Type(), Result: res.Value},
		warnings: res.Warnings, query: qs, closer: q.Close,
	}
}

// parseTime reads Unix seconds with an optional fraction, or RFC 3339.
func parseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1000))*int64(time.Millisecond)).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", s)
}

// parseDuration reads seconds with an optional fraction, or a Prometheus
// duration such as 5m.
func parseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		d := f * float64(time.Second)
		if d >= math.MaxInt64 || d <= math.MinInt64 {
			return 0, fmt.Errorf("cannot parse %q to a valid duration. It overflows int64", s)
		}
		return time.Duration(d), nil
	}
	if d, err := model.ParseDuration(s); err == nil {
		return time.Duration(d), nil
	}
	return 0, fmt.Errorf("cannot parse %q to a valid duration", s)
}

// queryData is the data of a query answer.
type queryData struct {
	ResultType parser.ValueType `json:"resultType"`
	Result     parser.Value     `json:"result"`
}
