package api

import (
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/uid"
)

// putResult counts one /api/put request and keeps its error details (a
// tally).
type putResult struct {
	dec                        *putjson.Decoder // echoes the refused points
	success, failed, throttled int
	timeouts                   int  // sync_timeout expired before the log sync
	showTimeouts               bool // sync_timeout > 0: the summary has "timeouts"
	details                    bool
	rollup                     bool   // echo RollUpDataPoint's fields (/api/rollup)
	errs                       []byte // JSON array elements, when details
	omitted                    int    // refused points left out of errs
	throttle                   string // why the first throttled point was refused
	firstErr                   string // the first refusal, for the log (ingest_log.go)
}

// putDetailLimit bounds the error details one /api/put answer holds: each
// echoes its data point, so a long body of bad points would otherwise grow
// the answer with the body, outside the in-flight budget. Past it, refused
// points are still counted in failed and reported as errorsOmitted.
const putDetailLimit = 4 << 20

// addError records a refused point with OpenTSDB's detail shape, the
// point echoed as OpenTSDB serializes it (putjson.Decoder.AppendEcho).
func (r *putResult) addError(msg string) {
	if !r.details {
		return
	}
	start := len(r.errs)
	if start > 0 {
		r.errs = append(r.errs, ',')
	}
	r.errs = append(r.errs, `{"datapoint":`...)
	if r.rollup {
		r.errs = r.dec.AppendRollupEcho(r.errs)
	} else {
		r.errs = r.dec.AppendEcho(r.errs)
	}
	r.errs = append(r.errs, `,"error":`...)
	r.errs = jsonw.JSON.AppendString(r.errs, msg)
	r.errs = append(r.errs, '}')
	if len(r.errs) > putDetailLimit {
		r.errs = r.errs[:start]
		r.omitted++
	}
}

// addCommitError records a failed commit of n points: their data points
// were echoed when decoded, not kept, so one element names the cause and
// the count, without a "datapoint".
func (r *putResult) addCommitError(err error, n int) {
	r.throttled += n
	r.noteErr(err.Error())
	if r.throttle == "" {
		r.throttle = service.ThrottleReason(err)
	}
	if !r.details || n == 0 {
		return
	}
	if len(r.errs) > 0 {
		r.errs = append(r.errs, ',')
	}
	r.errs = append(r.errs, `{"error":`...)
	r.errs = jsonw.JSON.AppendString(r.errs, err.Error()+" ("+strconv.Itoa(n)+" data points not written)")
	r.errs = append(r.errs, '}')
}

// putStreamBudget is what a /api/put body holds of the in-flight budget
// while it is decoded: the decoder's window (one data point of at most
// putjson.DefaultMaxElementBytes, and read-ahead), not the body, which is
// streamed from the network (and gunzipped) as the points are parsed.
const putStreamBudget = putjson.DefaultMaxElementBytes + putjson.WindowSlack

// handlePut is POST /api/put, OpenTSDB's PutDataPointRpc with tsd's
// status codes (docs/opentsdb.md, "Status codes and errors"). The body is
// decoded as it streams in and its points are committed every
// ingestBatchPoints; a body that fails part way (bad JSON, a
// broken stream) is answered with that failure, and the batches committed
// before it stay (fewer than ingestBatchPoints good points in all: nothing is
// stored). A body or data point over its limit is answered 413 once the
// points decoded before it are committed, and the answer counts them
// (writePutTooLarge): every data point before the limit was either written
// (success) or refused (failed), none after it was read.
func (a *ingestAPI) handlePut(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() { // PutDataPointRpc.execute: POST only
		writeMethodNotAllowed(ctx)
		return
	}
	args := ctx.QueryArgs()
	summary, sync := args.Has("summary"), args.Has("sync")
	res := putResult{details: args.Has("details")}
	defer func() { a.logRefused(ctx, ProtocolPut, res.failed+res.throttled, res.firstErr) }()
	body, ok := a.openPut(ctx, &res)
	if !ok {
		return
	}
	defer a.closePut(body)
	dec := body.dec
	sess := a.w.Session(service.Put)
	released := false
	defer func() {
		if !released {
			sess.Release()
		}
	}()
	err := a.drain(dec, sess, ingestBatchPoints, &res)
	if isPutTooLarge(err) {
		res.commit(sess, sync) // the points before the cut are answered as written
	}
	if a.refuseDrained(ctx, body, err, &res) {
		return
	}
	timeout := time.Duration(args.GetUintOrZero("sync_timeout")) * time.Millisecond
	res.showTimeouts = timeout > 0
	if sync && timeout > 0 {
		released = true
		switch err := commitWithin(sess, timeout); {
		case errors.Is(err, errSyncTimeout):
			res.timeouts, res.success = res.success, 0
		case err != nil:
			res.committed(res.success, err)
		}
	} else {
		res.commit(sess, sync)
	}
	writePutResult(ctx, &res, summary)
}

// putBody is an /api/put-shaped request body being decoded: its stream,
// the share of the ingest budget it holds, and the decoder reading it.
type putBody struct {
	bs  *bodyStream
	bb  *bodyBuf
	dec *putjson.Decoder
}

// openPut opens the body of an /api/put-shaped request (/api/put,
// /api/rollup) for decoding and sets res.dec. When the body cannot be
// read (too large, unreadable, or the ingest budget spent) it answers
// the request and reports false; otherwise closePut releases the body.
func (a *ingestAPI) openPut(ctx *fasthttp.RequestCtx, res *putResult) (putBody, bool) {
	bs, err := a.stream(ctx)
	if errors.Is(err, errBodyTooLarge) {
		a.putTooLarge(ctx, nil, err, res)
		return putBody{}, false
	}
	if err != nil {
		a.bodyError(ctx, err)
		return putBody{}, false
	}
	bb := a.getBuf()
	if !a.reserve(bb, putStreamBudget) {
		a.bodyError(ctx, errBudgetSpent)
		a.release(bb)
		a.putStream(bs)
		return putBody{}, false
	}
	dec := a.putDecs.get()
	dec.ResetReader(&bs.lim)
	res.dec = dec
	return putBody{bs: bs, bb: bb, dec: dec}, true
}

// closePut releases what openPut took, in the reverse order.
func (a *ingestAPI) closePut(b putBody) {
	a.putDecs.Put(b.dec)
	a.release(b.bb)
	a.putStream(b.bs)
}

// commit commits the session's pending points, synced when sync is set.
// When it fails, the points it wrote, or with sync all the request's
// points (none was acknowledged as synced), become throttled.
func (r *putResult) commit(sess *service.Session, sync bool) {
	n := sess.Pending()
	if sync {
		n = r.success
	}
	r.committed(n, sess.Commit(sync))
}

// committed counts a commit of n points: on failure they become
// throttled, and the details name the cause.
func (r *putResult) committed(n int, err error) {
	if err != nil {
		r.success -= n
		r.addCommitError(err, n)
	}
}

// isPutTooLarge reports a body or a data point over its limit.
func isPutTooLarge(err error) bool {
	var te *putjson.TooLargeError
	return errors.Is(err, errBodyTooLarge) || errors.As(err, &te)
}

// putTooLarge answers 413 for a body or a data point over its limit, with
// the counts of res. A data point too large is answered once the rest of
// the body is read (within its limit), so the client reads the answer.
func (a *ingestAPI) putTooLarge(ctx *fasthttp.RequestCtx, rest io.Reader, err error, res *putResult) {
	a.w.Stats(service.Put).TooLarge.Add(1)
	var te *putjson.TooLargeError
	if errors.As(err, &te) {
		a.s.rlog.Warn("http.point_too_large", ratelog.Client(ctx.RemoteAddr()), "data point over the limit",
			"path", string(ctx.Path()), "index", te.Index, "offset", te.Offset, "limit", te.Limit)
		io.Copy(io.Discard, rest)
		writePutTooLarge(ctx, "Data point too large", err.Error(), res)
		return
	}
	a.bodyTooLarge(ctx, func(msg string) { writePutTooLarge(ctx, "Request body too large", msg, res) })
}

// writePutTooLarge answers 413 with OpenTSDB's error JSON and, beside it,
// the summary's counts of the data points before the limit, so that a
// client whose body was cut knows exactly what landed: success points were
// written, failed ones refused (with their errors under ?details), and
// nothing after the limit was read.
//
//	{"error":{"code":413,"message":"Request body too large","details":"...;
//	 4096 data points before it were written, 0 failed"},"success":4096,"failed":0}
func writePutTooLarge(ctx *fasthttp.RequestCtx, message, details string, res *putResult) {
	failed := res.failed + res.throttled
	details += "; " + strconv.Itoa(res.success) + " data points before it were written, " + strconv.Itoa(failed) + " failed"
	b := appendError(nil, fasthttp.StatusRequestEntityTooLarge, message, details)
	b = append(b[:len(b)-1], `,"success":`...) // reopen the outer object
	b = strconv.AppendInt(b, int64(res.success), 10)
	b = append(b, `,"failed":`...)
	b = strconv.AppendInt(b, int64(failed), 10)
	if res.details {
		b = append(b, `,"errors":[`...)
		b = append(append(b, res.errs...), ']')
		if res.omitted > 0 {
			b = append(b, `,"errorsOmitted":`...)
			b = strconv.AppendInt(b, int64(res.omitted), 10)
		}
	}
	ctx.Response.Reset()
	ctx.SetStatusCode(fasthttp.StatusRequestEntityTooLarge)
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(append(b, '}'))
}

// refuseDrained answers a body whose drain failed, with err (too large,
// or not OpenTSDB's JSON), or that held no point, and reports whether it
// did; /api/put, /api/rollup and /api/histogram end their bodies alike.
func (a *ingestAPI) refuseDrained(ctx *fasthttp.RequestCtx, body putBody, err error, res *putResult) bool {
	switch {
	case isPutTooLarge(err):
		a.putTooLarge(ctx, &body.bs.lim, err, res)
	case err != nil:
		a.putBodyError(ctx, body.dec, &body.bs.lim, err)
	case body.dec.Count() == 0:
		writeError(ctx, fasthttp.StatusBadRequest, "No datapoints found in content", "")
	default:
		return false
	}
	return true
}

// putBodyError answers a body that stopped decoding. Bad data is answered
// once the rest of the body is read (within its limit), so the client,
// still sending, reads the answer.
func (a *ingestAPI) putBodyError(ctx *fasthttp.RequestCtx, dec *putjson.Decoder, rest io.Reader, err error) {
	var se *putjson.SyntaxError
	switch {
	case errors.As(err, &se) && dec.InputLen() == 0:
		writeError(ctx, fasthttp.StatusBadRequest, "Missing request content", "")
	case errors.As(err, &se) && se.Msg == putjson.MsgNotObjectOrArray:
		io.Copy(io.Discard, rest)
		writeError(ctx, fasthttp.StatusBadRequest, se.Msg, "") // parsePutV1's own message
	case errors.As(err, &se):
		io.Copy(io.Discard, rest)
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
	default:
		a.bodyError(ctx, err)
	}
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

// refused counts a data point the decoder refused.
func (r *putResult) refused(err error) {
	r.failed++
	r.noteErr(err.Error())
	r.addError(err.Error())
}

// added counts Session.Add's answer for a data point.
func (r *putResult) added(err error) {
	switch {
	case err == nil:
		r.success++
	case errors.Is(err, service.ErrThrottled):
		r.throttled++
		if r.throttle == "" {
			r.throttle = service.ThrottleReason(err)
		}
		r.noteErr(err.Error())
		r.addError(err.Error())
	case errors.Is(err, uid.ErrNoSuchName):
		// PutDataPointRpc's catch of NoSuchUniqueName, whichever name.
		r.failed++
		r.noteErr("Unknown metric: " + err.Error())
		r.addError("Unknown metric")
	default:
		r.failed++
		r.noteErr(err.Error())
		r.addError(err.Error())
	}
}

// writePutResult answers as OpenTSDB does, with 503 for any throttled
// point: without summary or details, an error naming why the first was
// refused.
func writePutResult(ctx *fasthttp.RequestCtx, res *putResult, summary bool) {
	switch {
	case res.throttled > 0 && !summary && !res.details:
		writeError(ctx, fasthttp.StatusServiceUnavailable, "Please throttle writes", res.throttle)
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
		return
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
	// OpenTSDB's summary is a HashMap: Java 8 writes its keys in the order
	// success, timeouts, failed, errors; timeouts is there whenever
	// sync_timeout > 0 (PutDataPointRpc's GroupCB and PutTimeout).
	b := append([]byte(`{"success":`), strconv.Itoa(res.success)...)
	if res.showTimeouts || res.timeouts > 0 {
		b = append(b, `,"timeouts":`...)
		b = strconv.AppendInt(b, int64(res.timeouts), 10)
	}
	// Timed-out writes are counted apart: failed is refused points plus
	// failed writes (PutTimeout: failures + failed_writes).
	b = append(b, `,"failed":`...)
	b = strconv.AppendInt(b, int64(res.failed+res.throttled), 10)
	if res.details {
		b = append(b, `,"errors":[`...)
		b = append(b, res.errs...)
		b = append(b, ']')
		if res.omitted > 0 {
			b = append(b, `,"errorsOmitted":`...)
			b = strconv.AppendInt(b, int64(res.omitted), 10)
		}
	}
	ctx.SetContentType(contentTypeJSON)
	ctx.SetBody(append(b, '}'))
}
