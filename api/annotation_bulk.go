package api

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/tsquery"
)

// bulkDeleteReq is OpenTSDB's AnnotationBulkDelete: times as given
// (relative, absolute or epoch), TSUIDs and/or the global flag.
type bulkDeleteReq struct {
	tsuids     []string // nil when not given
	global     bool
	start, end string
}

// bulkDeleteWire is the JSON body; times may be strings or numbers and
// the flag a boolean or its string, as Jackson coerces them.
type bulkDeleteWire struct {
	TSUIDs    []string        `json:"tsuids"`
	Global    json.RawMessage `json:"global"`
	StartTime json.RawMessage `json:"startTime"`
	EndTime   json.RawMessage `json:"endTime"`
}

// parseBulkDeleteBody reads a bulk DELETE body.
func parseBulkDeleteBody(body []byte) (bulkDeleteReq, *noteError) {
	var w bulkDeleteWire
	if err := json.Unmarshal(body, &w); err != nil {
		return bulkDeleteReq{}, noteBad("Unable to parse the given JSON", strings.TrimPrefix(err.Error(), "json: "))
	}
	r := bulkDeleteReq{tsuids: w.TSUIDs}
	var ok bool
	if r.start, ok = noteScalarText(w.StartTime); !ok {
		return r, noteBad("Unable to parse the given JSON", "startTime must be a string or a number")
	}
	if r.end, ok = noteScalarText(w.EndTime); !ok {
		return r, noteBad("Unable to parse the given JSON", "endTime must be a string or a number")
	}
	switch g, _ := noteScalarText(w.Global); g {
	case "true":
		r.global = true
	case "", "false", "null":
	default:
		return r, noteBad("Unable to parse the given JSON", "global must be true or false")
	}
	return r, nil
}

// noteScalarText returns a JSON string's text or a number's or boolean's
// literal; absent and null are "". Objects and arrays are refused.
func noteScalarText(raw json.RawMessage) (string, bool) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return "", true
	case s[0] == '"':
		var v string
		return v, json.Unmarshal(raw, &v) == nil
	case s[0] == '{' || s[0] == '[':
		return "", false
	}
	return s, true
}

// parseBulkDeleteQS reads the query-string form: start_time (required),
// end_time, tsuids (comma list) and global (present means true).
func parseBulkDeleteQS(args *fasthttp.Args) (bulkDeleteReq, *noteError) {
	if !args.Has("start_time") {
		return bulkDeleteReq{}, noteBad("Missing parameter <code>start_time</code>", "")
	}
	r := bulkDeleteReq{start: string(args.Peek("start_time")), end: string(args.Peek("end_time")),
		global: args.Has("global")}
	if args.Has("tsuids") {
		for _, t := range strings.Split(string(args.Peek("tsuids")), ",") {
			r.tsuids = append(r.tsuids, strings.TrimSpace(t))
		}
	}
	return r, nil
}

// bulkDelete removes the notes of the TSUIDs and/or the global ones whose
// start is in the range, and answers with the request and the count.
func (a *annotationAPI) bulkDelete(ctx *fasthttp.RequestCtx) *noteError {
	body, herr := a.body(ctx)
	if herr != nil {
		return herr
	}
	var r bulkDeleteReq
	if len(body) > 0 {
		r, herr = parseBulkDeleteBody(body)
	} else {
		r, herr = parseBulkDeleteQS(ctx.QueryArgs())
	}
	if herr != nil {
		return herr
	}
	startMs, endMs, targets, herr := a.checkBulkDelete(&r, noteNowMs())
	if herr != nil {
		return herr
	}
	total := 0
	for _, t := range targets {
		n, err := a.store.DeleteRange(ctx, t, startMs, endMs)
		if err != nil {
			return noteStoreError(err, "")
		}
		total += n
	}
	writeNoteJSON(ctx, appendBulkDeleteJSON(nil, &r, startMs, endMs, total))
	return nil
}

// checkBulkDelete validates r and returns its range in ms and the TSUIDs
// to clear (nil for the global notes).
func (a *annotationAPI) checkBulkDelete(r *bulkDeleteReq, now int64) (startMs, endMs int64, targets [][]byte, herr *noteError) {
	if r.start == "" {
		return 0, 0, nil, noteBad("Missing the start time value", "")
	}
	if !r.global && len(r.tsuids) == 0 {
		return 0, 0, nil, noteBad("Missing the TSUIDs or global annotations flag", "")
	}
	// A bad time is DateTime's IllegalArgumentException, which
	// executeBulkDelete wraps as BadRequestException(e): message twice.
	startMs, err := tsquery.ParseTime(r.start, "", now, a.loc)
	if err != nil {
		return 0, 0, nil, noteBad(err.Error(), err.Error())
	}
	endMs = now
	if r.end != "" {
		if endMs, err = tsquery.ParseTime(r.end, "", now, a.loc); err != nil {
			return 0, 0, nil, noteBad(err.Error(), err.Error())
		}
	}
	if r.global {
		targets = append(targets, nil)
	}
	for _, h := range r.tsuids {
		t, err := a.store.ParseTSUID(h)
		if err == nil && t == nil {
			err = annotation.ErrInvalid
		}
		if err != nil {
			return 0, 0, nil, noteBad("Invalid TSUID "+strconv.Quote(h), err.Error())
		}
		targets = append(targets, t)
	}
	return startMs, endMs, targets, nil
}

// appendBulkDeleteJSON writes the answer in Jackson's bean order:
// tsuids, global, startTime, endTime (ms), totalDeleted.
func appendBulkDeleteJSON(dst []byte, r *bulkDeleteReq, startMs, endMs int64, total int) []byte {
	dst = append(dst, `{"tsuids":`...)
	if r.tsuids == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.JSON.AppendStrings(dst, r.tsuids)
	}
	dst = append(dst, `,"global":`...)
	dst = strconv.AppendBool(dst, r.global)
	dst = append(dst, `,"startTime":`...)
	dst = strconv.AppendInt(dst, startMs, 10)
	dst = append(dst, `,"endTime":`...)
	dst = strconv.AppendInt(dst, endMs, 10)
	dst = append(dst, `,"totalDeleted":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	return append(dst, '}')
}
