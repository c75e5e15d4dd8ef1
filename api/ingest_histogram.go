package api

import (
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
)

// handleHistogram is POST /api/histogram, OpenTSDB 2.4's
// HistogramDataPointRpc: an /api/put-shaped body of HistogramPojo points
// (putjson.Decoder.SetHistogram), each either a codec's base64 bytes with
// its id or simple buckets with underflow and overflow, stored at once
// as one cell of its series' row (service.Session.AddHistogram). Answers,
// details, summary, status codes and the WARN line of refused points
// (logRefused) are /api/put's; every histogram is
// durable before the answer, so sync changes nothing. Without a codec
// table (tsd.core.histograms.config empty) every request is 503, as
// OpenTSDB answers, before its method is looked at.
func (a *ingestAPI) handleHistogram(ctx *fasthttp.RequestCtx) {
	if !a.w.HistogramsEnabled() {
		writeError(ctx, fasthttp.StatusServiceUnavailable, service.ErrHistogramsDisabled.Error(), "")
		return
	}
	if !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	args := ctx.QueryArgs()
	res := putResult{details: args.Has("details")}
	defer func() { a.logRefused(ctx, protocolHistogram, res.failed+res.throttled, res.firstErr) }()
	body, ok := a.openPut(ctx, &res)
	if !ok {
		return
	}
	defer a.closePut(body)
	dec := body.dec
	dec.SetHistogram(true)
	sess := a.w.Session(service.Put)
	defer sess.Release()
	if a.refuseDrained(ctx, body, a.drainHistogram(dec, sess, &res), &res) {
		return
	}
	writePutResult(ctx, &res, args.Has("summary"))
}

// drainHistogram stores the body's histograms one by one; a bad one
// costs only itself.
func (a *ingestAPI) drainHistogram(dec *putjson.Decoder, sess *service.Session, res *putResult) error {
	for dec.Next() {
		if err := dec.Bad(); err != nil {
			sess.CountBad(1)
			res.refused(err)
			continue
		}
		res.added(sess.AddHistogramJSON(a.s.work, dec.Point(), dec.HistogramFields()))
	}
	return dec.Err()
}
