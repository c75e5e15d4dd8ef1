package api

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/uid/index/lookup"
)

// searchTypes maps the /api/search types answered from the index to
// OpenTSDB's SearchType names.
var searchTypes = map[string]string{
	"tsmeta": "TSMETA", "tsmeta_summary": "TSMETA_SUMMARY", "tsuids": "TSUIDS", "uidmeta": "UIDMETA",
	"annotation": "ANNOTATION",
}

// searchRequest is OpenTSDB's SearchQuery as a search (not a lookup)
// reads it.
type searchRequest struct {
	Query      string
	Limit      int
	StartIndex int
}

// searchBody is the JSON body of a search.
type searchBody struct {
	Query      *string         `json:"query"`
	Limit      json.RawMessage `json:"limit"`
	StartIndex json.RawMessage `json:"startIndex"`
}

// parseSearchBody parses a search's JSON body; limit and startIndex may be
// numbers or strings holding them, as Jackson coerces.
func parseSearchBody(b []byte) (searchRequest, error) {
	r := searchRequest{Limit: lookup.DefaultLimit}
	var w searchBody
	if err := json.Unmarshal(b, &w); err != nil {
		return r, err
	}
	if w.Query != nil {
		r.Query = *w.Query
	}
	var err error
	if r.Limit, err = jsonInt(w.Limit, lookup.DefaultLimit, "limit"); err != nil {
		return r, err
	}
	r.StartIndex, err = jsonInt(w.StartIndex, 0, "startIndex")
	return r, err
}

type badNumberError struct{ field string }

func (e *badNumberError) Error() string {
	return "Unable to convert '" + e.field + "' to a valid number"
}

func jsonInt(raw json.RawMessage, def int, field string) (int, error) {
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	if s == "" || s == "null" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, &badNumberError{field}
	}
	return int(n), nil
}

// searchQS reads a search from the query string (SearchRpc.
// parseQueryString): query is required, limit and start_index optional.
func searchQS(ctx *fasthttp.RequestCtx) (searchRequest, bool) {
	r := searchRequest{Limit: lookup.DefaultLimit}
	q, ok := requiredParam(ctx, "query")
	if !ok {
		return r, false
	}
	r.Query = q
	for _, f := range []struct {
		k   string
		dst *int
	}{{"limit", &r.Limit}, {"start_index", &r.StartIndex}} {
		if !ctx.QueryArgs().Has(f.k) {
			continue
		}
		n, err := strconv.ParseInt(string(ctx.QueryArgs().Peek(f.k)), 10, 32)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to convert '"+f.k+"' to a valid number", "")
			return r, false
		}
		*f.dst = int(n)
	}
	return r, true
}

// handleIndexSearch answers a tsmeta, tsmeta_summary, tsuids or uidmeta
// search: OpenTSDB's SearchQuery JSON (type, query, limit, time, results,
// startIndex, totalResults), totalResults counting every match and
// results the page [startIndex, startIndex+limit).
func (a *metaAPI) handleIndexSearch(ctx *fasthttp.RequestCtx, typ string) {
	start := time.Now()
	var r searchRequest
	if hasContent(ctx) {
		b, ok := requestBody(ctx)
		if !ok {
			return
		}
		var err error
		if r, err = parseSearchBody(b); err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
			return
		}
	} else {
		var ok bool
		if r, ok = searchQS(ctx); !ok {
			return
		}
	}
	if (typ == "TSMETA" && !a.svc.HasTSMeta()) || (typ == "ANNOTATION" && a.s.opts.Annotations == nil) {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/search/"+strings.ToLower(typ), "")
		return
	}
	if !a.s.admitQuery(ctx) {
		return
	}
	total, n, elem, err := a.runSearch(ctx, typ, &r)
	if err != nil {
		a.s.queries.Release()
		if pe, ok := err.(*lookup.ParseError); ok {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse query", pe.Message)
			return
		}
		a.internalError(ctx, "search", err)
		return
	}
	head := append([]byte(`{"type":`), strconv.Quote(typ)...)
	head = jsonw.JSON.AppendPair(append(head, ','), "query", r.Query)
	head = strconv.AppendInt(append(head, `,"limit":`...), int64(r.Limit), 10)
	head = jsonw.AppendJavaFloat(append(head, `,"time":`...), float32(time.Since(start).Milliseconds()))
	head = append(head, `,"results":[`...)
	end := strconv.AppendInt([]byte(`],"startIndex":`), int64(r.StartIndex), 10)
	end = strconv.AppendInt(append(end, `,"totalResults":`...), int64(total), 10)
	src := &lazyList{open: head, end: append(end, '}'), n: n, elem: elem}
	if err := answer.Write(ctx, src, a.s.openTSDBAnswer(ctx, false)); err != nil {
		a.internalError(ctx, "search", err)
	}
}

// elemFunc makes element i of an answer's list.
type elemFunc func(ctx context.Context, dst []byte, i int) ([]byte, error)

// runSearch runs a search: the number of matches, and the page's length
// and elements, each read as the answer is made.
func (a *metaAPI) runSearch(ctx *fasthttp.RequestCtx, typ string, r *searchRequest) (int, int, elemFunc, error) {
	if typ == "UIDMETA" {
		total, ms, err := a.svc.SearchUIDMeta(ctx, r.Query, r.StartIndex, r.Limit)
		return total, len(ms), func(_ context.Context, dst []byte, i int) ([]byte, error) {
			return appendUIDMeta(dst, &ms[i]), nil
		}, err
	}
	q, err := lookup.ParseSearch(r.Query)
	if err != nil {
		return 0, 0, nil, err
	}
	if typ == "ANNOTATION" {
		return a.searchAnnotations(ctx, &q, r)
	}
	total, tsuids, err := a.svc.SearchSeries(ctx, &q, r.StartIndex, r.Limit)
	if err != nil {
		return 0, 0, nil, err
	}
	return total, len(tsuids), func(ctx context.Context, dst []byte, i int) ([]byte, error) {
		t := tsuids[i]
		switch typ {
		case "TSUIDS":
			return jsonw.JSON.AppendString(dst, hexUpper(t)), nil
		case "TSMETA_SUMMARY":
			se, err := a.svc.Describe(ctx, t)
			if err != nil {
				return dst, err
			}
			dst = append(jsonw.AppendTags(jsonw.JSON, append(dst, `{"tags":`...), se.Tags), `,"metric":`...)
			dst = jsonw.JSON.AppendString(dst, se.Metric)
			return append(jsonw.JSON.AppendString(append(dst, `,"tsuid":`...), se.TSUID), '}'), nil
		}
		m, err := a.svc.TSMetaOf(ctx, []byte(t))
		if err != nil {
			return dst, err
		}
		return appendTSMeta(dst, m), nil
	}, nil
}

// searchAnnotations finds the annotations of the series q matches, in the
// hours the index records for each (a series without known hours is read
// from its first possible hour to now), preceded by the global ones when
// q selects every series; series in TSUID order, each one's notes by start
// time.
func (a *metaAPI) searchAnnotations(ctx *fasthttp.RequestCtx, q *lookup.Query, r *searchRequest) (int, int, elemFunc, error) {
	spans, err := a.svc.SearchSpans(ctx, q)
	if err != nil {
		return 0, 0, nil, err
	}
	store := a.s.opts.Annotations
	var notes []annotation.Annotation
	if q.Metric == "*" && len(q.Tags) == 0 {
		g, err := store.Range(ctx, nil, 0, math.MaxUint32*1000)
		if err != nil {
			return 0, 0, nil, err
		}
		notes = append(notes, g...)
	}
	for _, sp := range spans {
		first, last := sp.FirstMs, sp.LastMs
		if !sp.Known {
			first, last = 0, time.Now().UnixMilli()
		}
		ns, err := store.Range(ctx, []byte(sp.TSUID), first, last)
		if err != nil {
			return 0, 0, nil, err
		}
		notes = append(notes, ns...)
	}
	pg := page(notes, r.StartIndex, r.Limit)
	return len(notes), len(pg), func(_ context.Context, dst []byte, i int) ([]byte, error) {
		return annotation.AppendJSON(dst, &pg[i]), nil
	}, nil
}

// page returns [start, start+limit) of all; limit 0 or less is no limit.
func page[T any](all []T, start, limit int) []T {
	if start < 0 || start >= len(all) {
		return nil
	}
	all = all[start:]
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	return all
}

// hexUpper is a TSUID's bytes in upper-case hex.
func hexUpper(s string) string {
	const digits = "0123456789ABCDEF"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}
