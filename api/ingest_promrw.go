package api

import (
	"errors"
	"strconv"

	"github.com/klauspost/compress/snappy"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/promrw"
	"github.com/tsd-db/tsd/ingest/service"
)

// handleRemoteWrite is Prometheus remote_write 1.0 and 2.0, POST
// /api/v1/write: a snappy block-compressed protobuf body.
//
// Every answer, errors included, carries the remote-write 2.0 headers
// counting what of the request was written: an error before the samples
// are decoded (a body over the limit, 413; a body that does not decode)
// writes none, and a 4xx or 5xx for some of its samples counts the others,
// which landed.
func (a *ingestAPI) handleRemoteWrite(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	v, err := promrw.ParseContentType(string(ctx.Request.Header.ContentType()))
	if err != nil {
		rwText(ctx, fasthttp.StatusUnsupportedMediaType, err.Error()+"\n")
		setWritten(ctx, 0)
		return
	}
	bb := a.getBuf()
	defer a.release(bb)
	if !a.snappyBody(ctx, bb) {
		setWritten(ctx, 0) // after the answer, which may have reset the headers
		return
	}
	res, err := a.rwDecode(bb.b, v)
	defer a.logRefused(ctx, ProtocolRemoteWrite, res.bad+res.throttled, res.firstErr)
	if err != nil {
		rwText(ctx, fasthttp.StatusBadRequest, err.Error()+"\n")
		setWritten(ctx, 0)
		return
	}
	setWritten(ctx, res.written)
	switch {
	case res.throttled > 0:
		rwText(ctx, fasthttp.StatusServiceUnavailable, "Please throttle writes: "+res.throttle+"\n")
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	case res.bad > 0:
		rwText(ctx, fasthttp.StatusBadRequest, strconv.Itoa(res.bad)+" bad series or samples:\n"+string(res.errs))
	default:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// snappyBody reads the compressed body (a snappy block must be whole) and
// decodes it into bb, both within the size limit and the budget; on failure
// it has answered.
func (a *ingestAPI) snappyBody(ctx *fasthttp.RequestCtx, bb *bodyBuf) bool {
	raw := a.getBuf()
	defer a.release(raw)
	if n := ctx.Request.Header.ContentLength(); n > snappy.MaxEncodedLen(a.limit) {
		a.rwBodyError(ctx, errBodyTooLarge)
		return false
	}
	lim := limitReader{r: rawStream(ctx), n: int64(snappy.MaxEncodedLen(a.limit))}
	if err := a.readAll(raw, &lim, a.sizeHint(ctx)); err != nil {
		a.rwBodyError(ctx, err)
		return false
	}
	n, err := snappy.DecodedLen(raw.b)
	switch {
	case err != nil:
		rwText(ctx, fasthttp.StatusBadRequest, "snappy: "+err.Error()+"\n")
		return false
	case n > a.limit:
		a.rwBodyError(ctx, errBodyTooLarge)
		return false
	case !a.reserve(bb, int64(n)):
		a.rwBodyError(ctx, errBudgetSpent)
		return false
	}
	bb.b, err = promrw.Decompress(bb.b[:0], raw.b, a.limit)
	if errors.Is(err, promrw.ErrTooLarge) {
		a.rwBodyError(ctx, errBodyTooLarge)
		return false
	}
	if err != nil {
		rwText(ctx, fasthttp.StatusBadRequest, err.Error()+"\n")
		return false
	}
	return true
}

// rwDecode stores the samples of body; a malformed body is an error and
// nothing of it is stored.
func (a *ingestAPI) rwDecode(body []byte, v promrw.Version) (pointCount, error) {
	dec := a.rwDecs.get()
	defer a.rwDecs.Put(dec)
	sess := a.w.Session(service.RemoteWrite)
	defer sess.Release()
	var res pointCount
	dec.Reset(body, v)
	if err := a.drain(dec, sess, 0, &res); err != nil {
		return res, err
	}
	commitPending(sess, &res)
	return res, nil
}

// rwBodyError answers a body that could not be read, counting one over
// the limit.
func (a *ingestAPI) rwBodyError(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, errBodyTooLarge) {
		a.w.Stats(service.RemoteWrite).TooLarge.Add(1)
	}
	a.bodyError(ctx, err)
}

// setWritten sets the remote-write 2.0 headers counting the samples of the
// request that were written (tsd stores no histograms or exemplars).
func setWritten(ctx *fasthttp.RequestCtx, samples int) {
	h := &ctx.Response.Header
	h.Set("X-Prometheus-Remote-Write-Samples-Written", strconv.Itoa(samples))
	h.Set("X-Prometheus-Remote-Write-Histograms-Written", "0")
	h.Set("X-Prometheus-Remote-Write-Exemplars-Written", "0")
}

func rwText(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(msg)
}
