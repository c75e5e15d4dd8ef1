package api

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/query/meta"
	"github.com/tsd-db/tsd/query/opentsdb"
)

// searchPlanned are /api/search types that need a search plugin in
// OpenTSDB; tsd has none yet, so they answer 501 naming the endpoint.
var searchPlanned = map[string]bool{"tsmeta": true, "tsmeta_summary": true, "tsuids": true, "uidmeta": true, "annotation": true}

// handleSearch is /api/search/<type> (OpenTSDB's SearchRpc). Only lookup
// is built.
func (a *metaAPI) handleSearch(ctx *fasthttp.RequestCtx) {
	if m := apiMethod(ctx); m != fasthttp.MethodGet && m != fasthttp.MethodPost {
		writeError(ctx, fasthttp.StatusBadRequest, "Unsupported method: "+m, "")
		return
	}
	switch typ := subEndpoint(ctx.Path()); {
	case typ == "lookup":
		a.handleLookup(ctx)
	case searchPlanned[typ]:
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/search/"+typ, "")
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
	case errors.Is(err, meta.ErrMissingQuery):
		writeError(ctx, fasthttp.StatusBadRequest, err.Error(), "")
		return
	case errors.Is(err, meta.ErrUnknownName):
		writeError(ctx, fasthttp.StatusNotFound, meta.ErrUnknownName.Error(), causeText(err, meta.ErrUnknownName))
		return
	case errors.Is(err, meta.ErrUnknownUID):
		writeError(ctx, fasthttp.StatusNotFound, meta.ErrUnknownUID.Error(), causeText(err, meta.ErrUnknownUID))
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
func lookupSource(q *meta.Query, res *meta.Result, took time.Duration) *answer.List {
	return &answer.List{Open: appendLookupHead(nil, q, res, took), End: []byte(`],"startIndex":0}`),
		N: len(res.Series), Elem: func(dst []byte, i int) []byte { return appendLookupSeries(dst, &res.Series[i]) }}
}

// causeText is the text of the cause query/meta wrapped in sentinel
// ("<sentinel>: <cause>"): SearchRpc's details are the cause's message
// alone (BadRequestException(status, message, cause)).
func causeText(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}

// lookupRequest parses the JSON body or the query string; false when it
// answered an error.
func lookupRequest(ctx *fasthttp.RequestCtx) (meta.Query, bool) {
	if hasContent(ctx) {
		b, ok := requestBody(ctx)
		if !ok {
			return meta.Query{}, false
		}
		q, err := meta.ParseJSON(b)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
			return q, false
		}
		return q, true
	}
	m, ok := requiredParam(ctx, "m")
	if !ok {
		return meta.Query{}, false
	}
	q, err := meta.ParseM(m)
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
func appendLookupHead(dst []byte, q *meta.Query, res *meta.Result, took time.Duration) []byte {
	dst = append(dst, `{"type":"LOOKUP","metric":`...)
	dst = appendNullableString(dst, q.Metric)
	dst = append(dst, `,"tags":[`...)
	for i, p := range q.Tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = appendNullableString(dst, p.Key)
		dst = append(dst, `,"value":`...)
		dst = appendNullableString(dst, p.Value)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"limit":`...)
	dst = strconv.AppendInt(dst, int64(q.Limit), 10)
	// SearchQuery.time is a float that SearchRpc sets to the elapsed
	// milliseconds, so Jackson writes "3.0".
	dst = append(dst, `,"time":`...)
	dst = opentsdb.AppendJavaFloat(dst, float32(took.Milliseconds()))
	dst = append(dst, `,"totalResults":`...)
	dst = strconv.AppendInt(dst, int64(res.Total), 10)
	return append(dst, `,"results":[`...)
}

func appendLookupSeries(dst []byte, s *meta.Series) []byte {
	dst = append(dst, `{"tsuid":`...)
	dst = appendJSONString(dst, s.TSUID)
	dst = append(dst, `,"metric":`...)
	dst = appendJSONString(dst, s.Metric)
	dst = append(dst, `,"tags":{`...)
	for i, p := range s.Tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, p.Key)
		dst = append(dst, ':')
		dst = appendJSONString(dst, p.Value)
	}
	return append(dst, "}}"...)
}
