package promapi

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// Metadata serves /api/v1/metadata. tsd keeps no metric help or type, so
// the map is empty; Grafana's autocomplete then shows names only. limit
// and limit_per_metric must be integers, as in Prometheus's
// metricMetadata.
func (a *API) Metadata(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	f := form{ctx}
	for _, name := range [...]string{"limit", "limit_per_metric"} {
		if s := f.get(name); s != "" {
			if _, err := strconv.Atoi(s); err != nil {
				writeError(ctx, badData(errors.New(name+" must be a number")))
				return
			}
		}
	}
	a.static(ctx, "{}")
}

// Rules serves /api/v1/rules: tsd evaluates no recording or alerting
// rules. Its parameters are checked as Prometheus's rules handler checks
// them, so a client's mistake is not hidden by the empty answer.
func (a *API) Rules(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	if _, err := parseMatchers(form{ctx}.all("match[]")); err != nil {
		writeError(ctx, badData(err))
		return
	}
	if aerr := checkRulesParams(ctx.QueryArgs()); aerr != nil {
		writeError(ctx, aerr)
		return
	}
	a.static(ctx, `{"groups":[]}`)
}

// checkRulesParams checks type, exclude_alerts and the group pagination
// parameters, which Prometheus reads from the URL only. With no rule
// groups, any group_next_token is one that names no group.
func checkRulesParams(args *fasthttp.Args) *apiError {
	if typ := strings.ToLower(string(args.Peek("type"))); typ != "" && typ != "alert" && typ != "record" {
		return invalidParam("type", fmt.Errorf("not supported value %q", typ))
	}
	if s := strings.ToLower(string(args.Peek("exclude_alerts"))); s != "" {
		if _, err := strconv.ParseBool(s); err != nil {
			return invalidParam("exclude_alerts", fmt.Errorf("error converting exclude_alerts: %w", err))
		}
	}
	limit, token := string(args.Peek("group_limit")), string(args.Peek("group_next_token"))
	if token != "" && limit == "" {
		return invalidParam("group_next_token", errors.New("group_limit needs to be present in order to paginate over the groups"))
	}
	if limit == "" {
		return nil
	}
	n, err := strconv.ParseInt(limit, 10, 32)
	switch {
	case err != nil:
		return invalidParam("group_limit", fmt.Errorf("group_limit needs to be a valid number: %w", err))
	case n <= 0:
		return invalidParam("group_limit", errors.New("group_limit needs to be greater than 0"))
	case token != "":
		return invalidParam("group_next_token", fmt.Errorf("invalid group_next_token '%v'. were rule groups changed?", token))
	}
	return nil
}

// BuildInfo serves /api/v1/status/buildinfo. It leaves out "features",
// whose presence makes Grafana take the server for Mimir.
func (a *API) BuildInfo(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte {
		b = append(b, `{"version":`...)
		b = jsonw.HTML.AppendString(b, a.opts.BuildVersion)
		b = append(b, `,"revision":`...)
		b = jsonw.HTML.AppendString(b, a.opts.Revision)
		b = append(b, `,"branch":"","buildUser":"","buildDate":"","goVersion":`...)
		b = jsonw.HTML.AppendString(b, runtime.Version())
		return append(b, '}')
	})
}

// static answers a fixed data document; the caller has checked the
// method.
func (a *API) static(ctx *fasthttp.RequestCtx, data string) {
	a.respond(ctx, nil, nil, func(b []byte) []byte { return append(b, data...) })
}
