package api

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/uid"
)

// putResult counts one /api/put request and keeps its error details.
type putResult struct {
	success, failed, throttled int
	batch                      int  // successes since the last commit
	timeouts                   int  // sync_timeout expired before the log sync
	showTimeouts               bool // sync_timeout > 0: the summary has "timeouts"
	details                    bool
	errs                       []byte // JSON array elements, when details
	omitted                    int    // refused points left out of errs
	throttle                   string // why the first throttled point was refused
}

// putDetailLimit bounds the error details one /api/put answer holds: each
// echoes its data point, so a long body of bad points would otherwise grow
// the answer with the body, outside the in-flight budget. Past it, refused
// points are still counted in failed and reported as errorsOmitted.
const putDetailLimit = 4 << 20

// addError records a refused point with OpenTSDB's detail shape, the
// point echoed as OpenTSDB serializes it (putjson.Decoder.AppendEcho).
func (r *putResult) addError(dec *putjson.Decoder, msg string) {
	if !r.details {
		return
	}
	start := len(r.errs)
	if start > 0 {
		r.errs = append(r.errs, ',')
	}
	r.errs = append(r.errs, `{"datapoint":`...)
	r.errs = dec.AppendEcho(r.errs)
	r.errs = append(r.errs, `,"error":`...)
	r.errs = appendJSONString(r.errs, msg)
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
	r.errs = appendJSONString(r.errs, err.Error()+" ("+strconv.Itoa(n)+" data points not written)")
	r.errs = append(r.errs, '}')
}

// putBatchPoints is how many points a /api/put request adds before it
// commits them, so a long body holds a bounded batch in the head's
// appender, not all its points.
const putBatchPoints = 4096

// putStreamBudget is what a /api/put body holds of the in-flight budget
// while it is decoded: the decoder's window (one data point of at most
// putjson.DefaultMaxElementBytes, and read-ahead), not the body, which is
// streamed from the network (and gunzipped) as the points are parsed.
const putStreamBudget = putjson.DefaultMaxElementBytes + putjson.WindowSlack

// handlePut is POST /api/put, OpenTSDB's PutDataPointRpc with tsd's
// status codes (docs/opentsdb.md, "Status codes and errors"). The body is decoded as it streams in and its points are
// committed every putBatchPoints; a body that fails part way (bad JSON, a
// broken stream) is answered with that failure, and the batches committed
// before it stay (fewer than putBatchPoints good points in all: nothing is
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
	bs, err := a.stream(ctx)
	if errors.Is(err, errBodyTooLarge) {
		a.putTooLarge(ctx, nil, err, &res)
		return
	}
	if err != nil {
		a.bodyError(ctx, err)
		return
	}
	defer a.putStream(bs)
	bb := a.getBuf()
	defer a.release(bb)
	if !a.reserve(bb, putStreamBudget) {
		a.bodyError(ctx, errBudgetSpent)
		return
	}
	dec := a.putDecoder()
	defer a.putDecs.Put(dec)
	sess := a.w.Session(service.Put)
	released := false
	defer func() {
		if !released {
			sess.Release()
		}
	}()
	dec.ResetReader(&bs.lim)
	for dec.Next() {
		a.putPoint(a.s.work, dec, sess, &res)
		if res.batch >= putBatchPoints {
			res.committed(sess.Commit(false), false)
		}
	}
	if err := dec.Err(); err != nil {
		if isPutTooLarge(err) {
			res.committed(sess.Commit(sync), sync)
			a.putTooLarge(ctx, &bs.lim, err, &res)
			return
		}
		a.putBodyError(ctx, dec, &bs.lim, err)
		return
	}
	if dec.Count() == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "No datapoints found in content", "")
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
			res.committed(err, true)
		}
	} else {
		res.committed(sess.Commit(sync), sync)
	}
	writePutResult(ctx, &res, summary)
}

// committed counts a commit's outcome: on failure the points of the batch
// it wrote, or with sync all the request's points (none was acknowledged
// as synced), become throttled, and the details name the cause.
func (r *putResult) committed(err error, sync bool) {
	if err != nil {
		n := r.batch
		if sync {
			n = r.success
		}
		r.success -= n
		r.addCommitError(err, n)
	}
	r.batch = 0
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

// putPoint stores one decoded element, counting it. ctx is the server's
// work context, never the fasthttp.RequestCtx: a context derived from that
// reads fasthttp's shutdown state while Close writes it (a data race), and
// costs a goroutine per derived context.
func (a *ingestAPI) putPoint(ctx context.Context, dec *putjson.Decoder, sess *service.Session, res *putResult) {
	if perr := dec.PointError(); perr != nil {
		sess.CountBad(1)
		res.failed++
		res.addError(dec, perr.Msg)
		return
	}
	err := sess.Add(ctx, dec.Point())
	switch {
	case err == nil:
		res.success++
		res.batch++
	case errors.Is(err, service.ErrThrottled):
		res.throttled++
		if res.throttle == "" {
			res.throttle = service.ThrottleReason(err)
		}
		res.addError(dec, err.Error())
	case errors.Is(err, uid.ErrNoSuchName):
		// PutDataPointRpc's catch of NoSuchUniqueName, whichever name.
		res.failed++
		res.addError(dec, "Unknown metric")
	default:
		res.failed++
		res.addError(dec, err.Error())
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

func (a *ingestAPI) putDecoder() *putjson.Decoder {
	if d, ok := a.putDecs.Get().(*putjson.Decoder); ok {
		return d
	}
	o := a.w.Options()
	d, _ := putjson.NewDecoder(&putjson.Options{MaxTags: o.MaxTags, AllowSpecialChars: o.AllowSpecialChars})
	return d
}
