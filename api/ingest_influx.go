package api

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/jsonw"
)

// influxVersion is sent in X-Influxdb-Version: a 1.8 server is what
// Telegraf's and Grafana's InfluxDB 1.x outputs expect.
const influxVersion = "1.8.10"

// handleWrite is InfluxDB 1.x POST /write.
func (a *ingestAPI) handleWrite(ctx *fasthttp.RequestCtx) { a.influxWrite(ctx, false) }

// handleWriteV2 is InfluxDB 2.x POST /api/v2/write.
func (a *ingestAPI) handleWriteV2(ctx *fasthttp.RequestCtx) { a.influxWrite(ctx, true) }

func (a *ingestAPI) influxWrite(ctx *fasthttp.RequestCtx, v2 bool) {
	ctx.Response.Header.Set("X-Influxdb-Version", influxVersion)
	if !ctx.IsPost() {
		influxError(ctx, v2, fasthttp.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
		return
	}
	prec, err := influx.ParsePrecision(string(ctx.QueryArgs().Peek("precision")))
	if err != nil {
		influxError(ctx, v2, fasthttp.StatusBadRequest, "invalid", err.Error())
		return
	}
	res, err := a.influxBody(ctx, prec)
	defer a.logRefused(ctx, ProtocolInflux, res.bad+res.throttled, res.firstErr)
	if err != nil {
		a.influxBodyError(ctx, v2, err, res.written)
		return
	}
	switch {
	case res.throttled > 0:
		setThrottled(ctx)
		influxError(ctx, v2, fasthttp.StatusServiceUnavailable, "unavailable",
			"Please throttle writes: "+res.throttle+"; "+pointsWritten(res.written))
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	case res.bad > 0:
		msg := "partial write: " + strings.TrimSuffix(string(res.errs), "\n") + " dropped=" + strconv.Itoa(res.bad)
		influxError(ctx, v2, fasthttp.StatusBadRequest, "invalid", msg)
	default:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// pointsWritten is the count an Influx error carries of the request's
// points that landed.
func pointsWritten(n int) string { return strconv.Itoa(n) + " points written" }

// influxBodyError answers a body that could not be read to its end, in
// InfluxDB's error shape, saying how many of its points were written (the
// lines decoded before the failure: see influxDecode).
func (a *ingestAPI) influxBodyError(ctx *fasthttp.RequestCtx, v2 bool, err error, written int) {
	switch {
	case errors.Is(err, errBodyTooLarge):
		a.w.Stats(service.Influx).TooLarge.Add(1)
		a.bodyTooLarge(ctx, func(msg string) {
			influxError(ctx, v2, fasthttp.StatusRequestEntityTooLarge, "request too large",
				"request body too large: "+msg+"; "+pointsWritten(written))
		})
	case errors.Is(err, errBudgetSpent):
		influxError(ctx, v2, fasthttp.StatusServiceUnavailable, "unavailable", "Please throttle writes: "+err.Error())
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	case errors.Is(err, errBodyRead) && isTimeout(err):
		// The client stopped sending for tsd.core.socket.timeout.
		influxError(ctx, v2, fasthttp.StatusRequestTimeout, "unavailable",
			"request timeout: the body stopped arriving: "+err.Error()+"; "+pointsWritten(written))
		ctx.SetConnectionClose()
	default: // a broken stream or a body that does not decompress
		influxError(ctx, v2, fasthttp.StatusBadRequest, "invalid", "unable to read the request body: "+err.Error()+"; "+pointsWritten(written))
	}
}

// influxStreamBudget is what a body holds of the in-flight budget while it
// is decoded: the decoder's line buffer and read-ahead, not the body, which
// is streamed from the network (and gunzipped) as the lines are parsed.
const influxStreamBudget = 1 << 20

// influxBody decodes and stores the request body as it streams in, so its
// size costs no memory; past the decompressed limit the request fails
// (errBodyTooLarge) once the lines before the limit are stored.
func (a *ingestAPI) influxBody(ctx *fasthttp.RequestCtx, prec influx.Precision) (pointCount, error) {
	bb := a.getBuf()
	defer a.release(bb)
	if !a.reserve(bb, influxStreamBudget) {
		return pointCount{}, errBudgetSpent
	}
	bs, err := a.stream(ctx)
	if err != nil {
		return pointCount{}, err
	}
	defer a.putStream(bs)
	dec := a.lpDecs.get()
	defer a.lpDecs.Put(dec)
	dec.ResetReader(&bs.lim, prec, time.Now().UnixMilli())
	return a.influxDecode(dec)
}

// influxDecode stores the decoder's points, committing every
// ingestBatchPoints, and counts the bad lines. A read error (a broken or
// oversized stream) stops it after the lines decoded before it are
// committed: res.written counts exactly the points that landed.
func (a *ingestAPI) influxDecode(dec *influx.Decoder) (pointCount, error) {
	sess := a.w.Session(service.Influx)
	defer sess.Release()
	var res pointCount
	err := a.drain(dec, sess, ingestBatchPoints, &res)
	commitPending(sess, &res)
	return res, err
}

// influxError answers in InfluxDB's error shape: 1.x {"error":"..."},
// 2.x {"code":"...","message":"..."}.
func influxError(ctx *fasthttp.RequestCtx, v2 bool, status int, code, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	var b []byte
	if v2 {
		b = append(b, `{"code":`...)
		b = jsonw.JSON.AppendString(b, code)
		b = append(b, `,"message":`...)
	} else {
		b = append(b, `{"error":`...)
	}
	b = jsonw.JSON.AppendString(b, msg)
	ctx.SetBody(append(b, '}'))
}

// handlePing is InfluxDB's GET/HEAD /ping.
func handlePing(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("X-Influxdb-Version", influxVersion)
	ctx.Response.Header.Set("X-Influxdb-Build", "OSS")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// handleInfluxQuery is InfluxDB 1.x /query: tsd has no databases, so CREATE
// DATABASE succeeds and SHOW DATABASES lists none but the one asked
// about, which lets Telegraf and other writers start cleanly.
func handleInfluxQuery(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("X-Influxdb-Version", influxVersion)
	ctx.SetContentType("application/json")
	q := bytes.TrimSpace(ctx.FormValue("q"))
	upper := bytes.ToUpper(q)
	switch {
	case bytes.HasPrefix(upper, []byte("CREATE DATABASE")):
		ctx.SetBodyString(`{"results":[{"statement_id":0}]}`)
	case bytes.HasPrefix(upper, []byte("SHOW DATABASES")):
		ctx.SetBodyString(`{"results":[{"statement_id":0,"series":[{"name":"databases","columns":["name"],"values":[["tsd"]]}]}]}`)
	default:
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
		b := jsonw.JSON.AppendString([]byte(`{"error":`), "query not supported by tsd: "+string(q))
		ctx.SetBody(append(b, '}'))
	}
}
