package api

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/storage"
)

// annotationAPI serves /api/annotation and its alias /api/annotations:
// one note by query string or JSON body, and the bulk forms under any
// sub-path ending in "bulk" (OpenTSDB's AnnotationRpc).
type annotationAPI struct {
	s     *Server // refuses state-changing GETs
	store *annotation.Store
	gate  *ingest.Gate // refuses changes while read-only
	limit int          // decompressed body limit
	// loc is the zone of absolute dates (tsd.core.timezone, through the
	// query engine's options), as OpenTSDB parses them in its default zone.
	loc *time.Location
}

// noteError is an answer in OpenTSDB's error JSON.
type noteError struct {
	code             int
	message, details string
}

func noteBad(message, details string) *noteError {
	return &noteError{fasthttp.StatusBadRequest, message, details}
}

// write answers e; a 503 (the store not answering or read-only) tells the
// client when to retry.
func (e *noteError) write(ctx *fasthttp.RequestCtx) {
	writeError(ctx, e.code, e.message, e.details)
	if e.code == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	}
}

// annotationRoute returns the endpoint, planned (501) without a store.
func (s *Server) annotationRoute(name string) endpoint {
	if s.opts.Annotations == nil {
		return planned(name)
	}
	a := &annotationAPI{s: s, store: s.opts.Annotations, gate: s.opts.Gate, limit: s.opts.MaxRequestBodySize, loc: time.UTC}
	if s.opts.Query != nil {
		a.loc = s.opts.Query.Options().Location
	}
	return endpoint{name: name, handle: a.handle}
}

func (a *annotationAPI) handle(ctx *fasthttp.RequestCtx) {
	method, herr := noteMethod(ctx)
	if herr == nil && method != fasthttp.MethodGet && (a.s.refuseStateChangingGET(ctx) || writeReadOnly(ctx, a.gate)) {
		return
	}
	if herr == nil {
		if isAnnotationBulkPath(ctx.Path()) {
			herr = a.bulk(ctx, method)
		} else {
			herr = a.single(ctx, method)
		}
	}
	if herr != nil {
		herr.write(ctx)
	}
}

// apiMethod is OpenTSDB's getAPIMethod: a GET may name another verb with
// method_override.
func noteMethod(ctx *fasthttp.RequestCtx) (string, *noteError) {
	m := string(ctx.Method())
	args := ctx.QueryArgs()
	if m != fasthttp.MethodGet || !args.Has("method_override") {
		return m, nil
	}
	switch v := strings.ToUpper(string(args.Peek("method_override"))); v {
	case "":
		return "", &noteError{fasthttp.StatusMethodNotAllowed, "Missing method override value", ""}
	case fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodDelete:
		return v, nil
	}
	return "", &noteError{fasthttp.StatusMethodNotAllowed, "Unknown or unsupported method override value", ""}
}

// isAnnotationBulkPath reports whether the segment after the endpoint ends in
// "bulk" (/api/annotation/bulk, /api/v1/annotations/bulk).
func isAnnotationBulkPath(path []byte) bool {
	segs := strings.Split(strings.Trim(string(path), "/"), "/")
	if len(segs) > 1 && len(segs[1]) > 1 && (segs[1][0] == 'v' || segs[1][0] == 'V') && isDigit(segs[1][1]) {
		segs = segs[1:] // the version
	}
	return len(segs) > 2 && strings.HasSuffix(strings.ToLower(segs[2]), "bulk")
}

func noteMethodNotAllowed(method string) *noteError {
	return &noteError{fasthttp.StatusMethodNotAllowed, "Method not allowed",
		"The HTTP method [" + method + "] is not permitted for this endpoint"}
}

// body returns the request body, decompressed per Content-Encoding.
func (a *annotationAPI) body(ctx *fasthttp.RequestCtx) ([]byte, *noteError) {
	b, err := ctx.Request.BodyUncompressedWithLimit(a.limit)
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return nil, &noteError{fasthttp.StatusRequestEntityTooLarge, "Request body too large",
			"The decompressed request body is larger than the limit of " + strconv.Itoa(a.limit) + " bytes"}
	case err != nil:
		return nil, noteBad("Unable to decompress the request body", err.Error())
	}
	return b, nil
}

// single serves one annotation.
func (a *annotationAPI) single(ctx *fasthttp.RequestCtx, method string) *noteError {
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodDelete:
	default:
		return noteMethodNotAllowed(method)
	}
	body, herr := a.body(ctx)
	if herr != nil {
		return herr
	}
	note, herr := parseNote(body, ctx.QueryArgs(), noteNowMs(), a.loc)
	if herr != nil {
		return herr
	}
	switch method {
	case fasthttp.MethodGet:
		return a.get(ctx, &note)
	case fasthttp.MethodDelete:
		return a.delete(ctx, &note)
	}
	return a.put(ctx, &note, method == fasthttp.MethodPut)
}

func noteNowMs() int64 { return time.Now().UnixMilli() }

// parseNote reads the note from a JSON body, or else from the query
// string as OpenTSDB's parseQS does (times become seconds; custom cannot
// be given there).
func parseNote(body []byte, args *fasthttp.Args, now int64, loc *time.Location) (annotation.Annotation, *noteError) {
	if len(body) > 0 {
		n, err := annotation.Decode(body)
		if err != nil {
			return n, noteBad("Unable to parse the given JSON", err.Error())
		}
		return n, nil
	}
	var n annotation.Annotation
	n.TSUID = string(args.Peek("tsuid"))
	start, err := tsquery.ParseTime(string(args.Peek("start_time")), "", now, loc)
	if err != nil {
		return n, noteBad(err.Error(), "")
	}
	if start < 1 {
		return n, noteBad("Missing start time", "")
	}
	end, err := tsquery.ParseTime(string(args.Peek("end_time")), "", now, loc)
	if err != nil {
		return n, noteBad(err.Error(), "")
	}
	n.StartTime, n.EndTime = start/1000, end/1000
	n.Description = string(args.Peek("description"))
	n.Notes = string(args.Peek("notes"))
	n.Given = n.Changed()
	return n, nil
}

func (a *annotationAPI) get(ctx *fasthttp.RequestCtx, n *annotation.Annotation) *noteError {
	tsuid, err := a.store.ParseTSUID(n.TSUID)
	if err != nil {
		return noteStoreError(err, "")
	}
	got, err := a.store.Get(ctx, tsuid, n.StartTime)
	if err != nil {
		return noteStoreError(err, "")
	}
	writeNoteJSON(ctx, annotation.AppendJSON(nil, &got))
	return nil
}

func (a *annotationAPI) put(ctx *fasthttp.RequestCtx, n *annotation.Annotation, overwrite bool) *noteError {
	got, err := a.store.Put(ctx, n, overwrite)
	if errors.Is(err, annotation.ErrNoChanges) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return nil
	}
	if err != nil {
		herr := noteStoreError(err, "")
		if herr.code == fasthttp.StatusBadRequest {
			// AnnotationRpc wraps syncToStorage's IllegalArgumentException
			// as BadRequestException(e): the message is the details too.
			herr.details = herr.message
		}
		return herr
	}
	writeNoteJSON(ctx, annotation.AppendJSON(nil, &got))
	return nil
}

func (a *annotationAPI) delete(ctx *fasthttp.RequestCtx, n *annotation.Annotation) *noteError {
	if n.StartTime < 1 {
		return noteBad("Unable to delete Annotation information", annotation.ErrNoStartTime.Error())
	}
	tsuid, err := a.store.ParseTSUID(n.TSUID)
	if err == nil {
		err = a.store.Delete(ctx, tsuid, n.StartTime)
	}
	if err != nil {
		return noteStoreError(err, "")
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// storeError maps the store's errors to OpenTSDB's answers.
func noteStoreError(err error, details string) *noteError {
	switch {
	case errors.Is(err, annotation.ErrNotFound):
		return &noteError{fasthttp.StatusNotFound, err.Error(), details}
	case errors.Is(err, annotation.ErrNoStartTime), errors.Is(err, annotation.ErrNoEndTime),
		errors.Is(err, annotation.ErrEndBeforeStart), errors.Is(err, annotation.ErrInvalid):
		return noteBad(err.Error(), details)
	case errors.Is(err, annotation.ErrConflict):
		return &noteError{fasthttp.StatusInternalServerError, err.Error(),
			"This may be caused by another process modifying storage data"}
	case errors.Is(err, storage.ErrReadOnly):
		return &noteError{fasthttp.StatusServiceUnavailable, "Read-only", err.Error()}
	case storage.IsRetryable(err), errors.Is(err, context.DeadlineExceeded):
		return &noteError{fasthttp.StatusServiceUnavailable, "Storage is not answering", err.Error()}
	}
	return &noteError{fasthttp.StatusInternalServerError, "Storage error", err.Error()}
}

func writeNoteJSON(ctx *fasthttp.RequestCtx, body []byte) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(body)
}

// bulk serves /api/annotation/bulk.
func (a *annotationAPI) bulk(ctx *fasthttp.RequestCtx, method string) *noteError {
	switch method {
	case fasthttp.MethodPost, fasthttp.MethodPut:
		return a.bulkUpdate(ctx, method == fasthttp.MethodPut)
	case fasthttp.MethodDelete:
		return a.bulkDelete(ctx)
	}
	return noteMethodNotAllowed(method)
}

var errNoteMissingContent = noteBad("Missing message content",
	"Supply valid JSON formatted data in the body of your request")

// bulkUpdate writes an array of notes. Every note is checked before any
// is written (OpenTSDB writes the ones before a bad note); notes without
// changes are left out of the answer, as in OpenTSDB.
func (a *annotationAPI) bulkUpdate(ctx *fasthttp.RequestCtx, overwrite bool) *noteError {
	body, herr := a.body(ctx)
	if herr != nil {
		return herr
	}
	notes, herr := parseNotes(body)
	if herr != nil {
		return herr
	}
	for i := range notes {
		if herr := a.checkNote(&notes[i]); herr != nil {
			return herr
		}
	}
	out := []byte{'['}
	for i := range notes {
		got, err := a.store.Put(ctx, &notes[i], overwrite)
		if errors.Is(err, annotation.ErrNoChanges) {
			continue
		}
		if err != nil {
			return noteStoreError(err, "Annotation error: "+notes[i].String())
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = annotation.AppendJSON(out, &got)
	}
	writeNoteJSON(ctx, append(out, ']'))
	return nil
}

// parseNotes reads a bulk body: a JSON array of notes.
func parseNotes(body []byte) ([]annotation.Annotation, *noteError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errNoteMissingContent
	}
	notes, err := annotation.DecodeList(body)
	if err != nil {
		return nil, noteBad("Unable to parse the given JSON", err.Error())
	}
	return notes, nil
}

func (a *annotationAPI) checkNote(n *annotation.Annotation) *noteError {
	if n.StartTime < 1 {
		return noteBad(annotation.ErrNoStartTime.Error(), "Annotation error: "+n.String())
	}
	if _, err := a.store.ParseTSUID(n.TSUID); err != nil {
		return noteBad(err.Error(), "Annotation error: "+n.String())
	}
	return nil
}
