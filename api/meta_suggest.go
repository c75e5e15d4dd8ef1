package api

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/uid"
)

// suggestKinds maps /api/suggest's type to a UID kind; the names are
// case-sensitive, as OpenTSDB's equals checks.
var suggestKinds = map[string]uid.Kind{"metrics": uid.Metric, "tagk": uid.TagK, "tagv": uid.TagV}

// suggestParams are /api/suggest's type, q and max, as text.
type suggestParams struct {
	typ, q, max string
}

// handleSuggest is /api/suggest (OpenTSDB's SuggestRpc): GET with type, q
// and max, or POST {"type","q","max"}; a JSON array of names in byte
// order. An empty q lists the kind from the start, UTF-8 names included.
func (a *metaAPI) handleSuggest(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	p, ok := suggestRequest(ctx)
	if !ok {
		return
	}
	max := 0
	if p.max != "" {
		n, err := strconv.ParseInt(p.max, 10, 32)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse 'max' as a number", "")
			return
		}
		max = int(n)
	}
	kind, ok := suggestKinds[p.typ]
	if !ok {
		writeError(ctx, fasthttp.StatusBadRequest, "Invalid 'type' parameter:"+p.typ, "")
		return
	}
	names, err := a.svc.UIDs().Suggest(ctx, kind, p.q, max)
	if err != nil {
		a.internalError(ctx, "suggest", err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, jsonw.JSON.AppendStrings(nil, names))
}

// suggestRequest reads the parameters from the JSON body of a POST or the
// query string; false when it answered an error.
func suggestRequest(ctx *fasthttp.RequestCtx) (suggestParams, bool) {
	if ctx.IsPost() && hasContent(ctx) {
		var m map[string]any
		if !decodeBody(ctx, &m) {
			return suggestParams{}, false
		}
		p := suggestParams{typ: jsonText(m["type"]), q: jsonText(m["q"]), max: jsonText(m["max"])}
		if p.typ == "" {
			writeError(ctx, fasthttp.StatusBadRequest, "Missing 'type' parameter", "")
			return p, false
		}
		return p, true
	}
	typ, ok := requiredParam(ctx, "type")
	args := ctx.QueryArgs()
	return suggestParams{typ: typ, q: string(args.Peek("q")), max: string(args.Peek("max"))}, ok
}

// jsonText renders a decoded JSON scalar as Jackson coerces it to a
// String: strings as they are, numbers and booleans as written, null as "".
func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strings.TrimSuffix(strconv.FormatFloat(x, 'f', -1, 64), ".0")
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// internalError answers 500 for a failure that is not the client's, and
// logs it.
func (a *metaAPI) internalError(ctx *fasthttp.RequestCtx, what string, err error) {
	a.s.log.Error(what+" failed", "path", string(ctx.Path()), "err", err)
	writeError(ctx, fasthttp.StatusInternalServerError, "Unexpected exception", err.Error())
}
