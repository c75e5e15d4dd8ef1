package api

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/uid/index/lookup"
)

// handleSearch is /api/search/<type> (OpenTSDB's SearchRpc): lookup, and
// tsmeta, tsmeta_summary, tsuids, uidmeta and annotation answered from the
// series index, the UID table and the annotations (meta_search_index.go).
func (a *metaAPI) handleSearch(ctx *fasthttp.RequestCtx) {
	if m := apiMethod(ctx); m != fasthttp.MethodGet && m != fasthttp.MethodPost {
		writeError(ctx, fasthttp.StatusBadRequest, "Unsupported method: "+m, "")
		return
	}
	switch typ := subEndpoint(ctx.Path()); {
	case typ == "lookup":
		a.handleLookup(ctx)
	case searchTypes[typ] != "":
		a.handleIndexSearch(ctx, searchTypes[typ])
	default:
		writeError(ctx, fasthttp.StatusBadRequest, "Invalid search query type supplied", "")
	}
}

// handleLookup is /api/search/lookup: m=<metric>{k=v,...} and limit in the
// query string, or a JSON body; answered from the series index.
func (a *metaAPI) handleLookup(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	q, ok := lookupRequest(ctx)
	if !ok || !a.s.admitQuery(ctx) {
		return
	}
	res, err := a.svc.Lookup(ctx, &q)
	if err != nil {
		a.s.queries.Release()
	}
	switch {
	case errors.Is(err, lookup.ErrMissingQuery):
		writeError(ctx, fasthttp.StatusBadRequest, err.Error(), "")
		return
	case errors.Is(err, lookup.ErrUnknownName):
		writeError(ctx, fasthttp.StatusNotFound, lookup.ErrUnknownName.Error(), causeText(err, lookup.ErrUnknownName))
		return
	case errors.Is(err, lookup.ErrUnknownUID):
		writeError(ctx, fasthttp.StatusNotFound, lookup.ErrUnknownUID.Error(), causeText(err, lookup.ErrUnknownUID))
		return
	case err != nil:
		a.internalError(ctx, "lookup", err)
		return
	}
	src := lookupSource(&q, res, time.Since(start))
	if err := answer.Write(ctx, src, a.s.openTSDBAnswer(ctx, false)); err != nil {
		a.internalError(ctx, "lookup", err) // unreachable: a list in memory does not fail
	}
}

// lookupSource writes appendLookup's answer in parts, a series at a
// time.
func lookupSource(q *lookup.Query, res *lookup.Result, took time.Duration) *answer.List {
	return &answer.List{Open: appendLookupHead(nil, q, res, took), End: []byte(`],"startIndex":0}`),
		N: len(res.Series), Elem: func(dst []byte, i int) []byte { return appendLookupSeries(dst, &res.Series[i]) }}
}

// causeText is the text of the cause package lookup wrapped in sentinel
// ("<sentinel>: <cause>"): SearchRpc's details are the cause's message
// alone (BadRequestException(status, message, cause)).
func causeText(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}

// lookupRequest parses the JSON body or the query string; false when it
// answered an error.
func lookupRequest(ctx *fasthttp.RequestCtx) (lookup.Query, bool) {
	if hasContent(ctx) {
		b, ok := requestBody(ctx)
		if !ok {
			return lookup.Query{}, false
		}
		q, err := lookup.ParseJSON(b)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
			return q, false
		}
		return q, true
	}
	m, ok := requiredParam(ctx, "m")
	if !ok {
		return lookup.Query{}, false
	}
	q, err := lookup.ParseM(m)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse query", err.Error())
		return q, false
	}
	if l := ctx.QueryArgs().Peek("limit"); len(l) > 0 {
		n, err := strconv.ParseInt(string(l), 10, 32)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to convert 'limit' to a valid number", "")
			return q, false
		}
		q.Limit = int(n)
	}
	return q, true
}

// appendLookupHead appends OpenTSDB's lookup answer (type, metric, tags,
// limit, time, totalResults, results, startIndex) up to the results'
// array.
func appendLookupHead(dst []byte, q *lookup.Query, res *lookup.Result, took time.Duration) []byte {
	dst = append(dst, `{"type":"LOOKUP","metric":`...)
	dst = jsonw.JSON.AppendNullable(dst, q.Metric)
	dst = append(dst, `,"tags":[`...)
	for i, p := range q.Tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = jsonw.JSON.AppendNullable(dst, p.Key)
		dst = append(dst, `,"value":`...)
		dst = jsonw.JSON.AppendNullable(dst, p.Value)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"limit":`...)
	dst = strconv.AppendInt(dst, int64(q.Limit), 10)
	// SearchQuery.time is a float that SearchRpc sets to the elapsed
	// milliseconds, so Jackson writes "3.0".
	dst = append(dst, `,"time":`...)
	dst = jsonw.AppendJavaFloat(dst, float32(took.Milliseconds()))
	// totalResults is the number of series returned, so at most limit:
	// OpenTSDB 2.4's SearchRpc writes the size of TimeSeriesLookup's
	// answer, and the lookup stops scanning at the limit.
	dst = append(dst, `,"totalResults":`...)
	dst = strconv.AppendInt(dst, int64(res.Total), 10)
	return append(dst, `,"results":[`...)
}

func appendLookupSeries(dst []byte, s *lookup.Series) []byte {
	dst = append(dst, `{"tsuid":`...)
	dst = jsonw.JSON.AppendString(dst, s.TSUID)
	dst = append(dst, `,"metric":`...)
	dst = jsonw.JSON.AppendString(dst, s.Metric)
	dst = append(dst, `,"tags":`...)
	return append(jsonw.AppendTags(jsonw.JSON, dst, s.Tags), '}')
}
