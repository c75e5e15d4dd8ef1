package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
)

// putResult counts one /api/put request and keeps its error details.
type putResult struct {
	success, failed, throttled int
	timeouts                   int // sync_timeout expired before the log sync
	details                    bool
	errs                       []byte // JSON array elements, when details
}

// addError records a refused point with OpenTSDB's detail shape.
func (r *putResult) addError(raw []byte, msg string) {
	if !r.details {
		return
	}
	if len(r.errs) > 0 {
		r.errs = append(r.errs, ',')
	}
	r.errs = append(r.errs, `{"datapoint":`...)
	r.errs = append(r.errs, raw...)
	r.errs = append(r.errs, `,"error":`...)
	r.errs = appendJSONString(r.errs, msg)
	r.errs = append(r.errs, '}')
}

// handlePut is POST /api/put (spec/opentsdb.md §5.3, routes.md status codes).
func (a *ingestAPI) handlePut(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() && !ctx.IsPut() {
		writeMethodNotAllowed(ctx)
		return
	}
	args := ctx.QueryArgs()
	summary, sync := args.Has("summary"), args.Has("sync")
	res := putResult{details: args.Has("details")}
	bb := a.body(ctx)
	if bb == nil {
		return
	}
	defer a.release(bb)
	dec := a.putDecoder()
	defer a.putDecs.Put(dec)
	sess := a.w.Session(service.Put)
	released := false
	defer func() {
		if !released {
			sess.Release()
		}
	}()
	dec.Reset(bb.b)
	for dec.Next() {
		a.putPoint(ctx, dec, sess, &res)
	}
	if err := dec.Err(); err != nil {
		if len(bb.b) == 0 {
			writeError(ctx, fasthttp.StatusBadRequest, "Missing request content", "")
			return
		}
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
		return
	}
	if dec.Count() == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "No datapoints found in content", "")
		return
	}
	timeout := time.Duration(args.GetUintOrZero("sync_timeout")) * time.Millisecond
	if sync && timeout > 0 {
		released = true
		switch err := commitWithin(sess, timeout); {
		case errors.Is(err, errSyncTimeout):
			res.timeouts, res.success = res.success, 0
		case err != nil:
			res.throttled, res.success = res.throttled+res.success, 0
		}
	} else if err := sess.Commit(sync); err != nil {
		res.throttled += res.success
		res.success = 0
	}
	writePutResult(ctx, &res, summary)
}

// errSyncTimeout is a sync commit that did not finish within sync_timeout.
var errSyncTimeout = errors.New("sync_timeout expired")

// commitWithin commits synchronously and releases sess; errSyncTimeout when
// it does not finish within timeout. The commit goes
// on after a timeout (the points may land; a retry rewrites the same
// values), and the session is released when it ends.
func commitWithin(sess *service.Session, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		done <- sess.Commit(true)
		sess.Release()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errSyncTimeout
	}
}

// putPoint stores one decoded element, counting it.
func (a *ingestAPI) putPoint(ctx context.Context, dec *putjson.Decoder, sess *service.Session, res *putResult) {
	if perr := dec.PointError(); perr != nil {
		sess.CountBad(1)
		res.failed++
		res.addError(dec.Raw(), perr.Msg)
		return
	}
	err := sess.Add(ctx, dec.Point())
	switch {
	case err == nil:
		res.success++
	case errors.Is(err, service.ErrThrottled):
		res.throttled++
		res.addError(dec.Raw(), err.Error())
	default:
		res.failed++
		res.addError(dec.Raw(), err.Error())
	}
}

// writePutResult answers as OpenTSDB does, with 503 for any throttled point.
func writePutResult(ctx *fasthttp.RequestCtx, res *putResult, summary bool) {
	switch {
	case res.throttled > 0 || res.timeouts > 0:
		setThrottled(ctx)
	case res.failed == 0 && !summary && !res.details:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	case !summary && !res.details:
		writeError(ctx, fasthttp.StatusBadRequest, "One or more data points had errors",
			`Please see the TSD logs or append "details" to the put request`)
		return
	case res.failed > 0:
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
	default:
		ctx.SetStatusCode(fasthttp.StatusOK)
	}
	b := append([]byte(`{"success":`), strconv.Itoa(res.success)...)
	b = append(b, `,"failed":`...)
	b = strconv.AppendInt(b, int64(res.failed+res.throttled+res.timeouts), 10)
	if res.timeouts > 0 {
		b = append(b, `,"timeouts":`...)
		b = strconv.AppendInt(b, int64(res.timeouts), 10)
	}
	if res.details {
		b = append(b, `,"errors":[`...)
		b = append(b, res.errs...)
		b = append(b, ']')
	}
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(append(b, '}'))
}

func (a *ingestAPI) putDecoder() *putjson.Decoder {
	if d, ok := a.putDecs.Get().(*putjson.Decoder); ok {
		return d
	}
	o := a.w.Options()
	d, _ := putjson.NewDecoder(&putjson.Options{MaxTags: o.MaxTags, AllowSpecialChars: o.AllowSpecialChars})
	return d
}
