package api

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/service"
)

// influxVersion is sent in X-Influxdb-Version: a 1.8 server is what
// Telegraf's and Grafana's InfluxDB 1.x outputs expect.
const influxVersion = "1.8.10"

// maxInfluxErrors bounds the bad lines quoted in a partial-write error.
const maxInfluxErrors = 10

// influxResult counts one write request.
type influxResult struct {
	bad, throttled int
	errs           []byte // bad lines' messages, "\n"-separated
	throttle       string
}

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
	if err != nil {
		a.bodyError(ctx, err)
		return
	}
	switch {
	case res.throttled > 0:
		setThrottled(ctx)
		influxError(ctx, v2, fasthttp.StatusServiceUnavailable, "unavailable", "Please throttle writes: "+res.throttle)
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	case res.bad > 0:
		msg := "partial write: " + string(res.errs) + " dropped=" + strconv.Itoa(res.bad)
		influxError(ctx, v2, fasthttp.StatusBadRequest, "invalid", msg)
	default:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// influxStreamBudget is what a body holds of the in-flight budget while it
// is decoded: the decoder's line buffer and read-ahead, not the body, which
// is streamed from the network (and gunzipped) as the lines are parsed.
const influxStreamBudget = 1 << 20

// influxBody decodes and stores the request body as it streams in, so its
// size costs no memory; past the decompressed limit the request fails
// (errBodyTooLarge) and none of its points is kept.
func (a *ingestAPI) influxBody(ctx *fasthttp.RequestCtx, prec influx.Precision) (influxResult, error) {
	bb := a.getBuf()
	defer a.release(bb)
	if !a.reserve(bb, influxStreamBudget) {
		return influxResult{}, errBudgetSpent
	}
	bs, err := a.stream(ctx)
	if err != nil {
		return influxResult{}, err
	}
	defer a.putStream(bs)
	dec := a.lpDecoder()
	defer a.lpDecs.Put(dec)
	dec.ResetReader(&bs.lim, prec, time.Now().UnixMilli())
	return a.influxDecode(ctx, dec)
}

// influxDecode stores the decoder's points and counts the bad lines; a
// read error (a bad or oversized gzip stream) stores nothing.
func (a *ingestAPI) influxDecode(ctx *fasthttp.RequestCtx, dec *influx.Decoder) (influxResult, error) {
	sess := a.w.Session(service.Influx)
	defer sess.Release()
	var res influxResult
	for dec.Next() {
		if le := dec.LineError(); le != nil {
			sess.CountBad(1)
			res.addError(le.Error())
			continue
		}
		if err := sess.Add(ctx, dec.Point()); errors.Is(err, service.ErrThrottled) {
			res.throttled++
			res.throttle = service.ThrottleReason(err)
		} else if err != nil {
			res.addError(err.Error())
		}
	}
	if err := dec.Err(); err != nil {
		return res, err
	}
	if err := sess.Commit(false); err != nil {
		res.throttled++
		res.throttle = service.ThrottleReason(err)
	}
	return res, nil
}

func (r *influxResult) addError(msg string) {
	r.bad++
	if r.bad > maxInfluxErrors {
		return
	}
	if len(r.errs) > 0 {
		r.errs = append(r.errs, '\n')
	}
	r.errs = append(r.errs, msg...)
}

// influxError answers in InfluxDB's error shape: 1.x {"error":"..."},
// 2.x {"code":"...","message":"..."}.
func influxError(ctx *fasthttp.RequestCtx, v2 bool, status int, code, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	var b []byte
	if v2 {
		b = append(b, `{"code":`...)
		b = appendJSONString(b, code)
		b = append(b, `,"message":`...)
	} else {
		b = append(b, `{"error":`...)
	}
	b = appendJSONString(b, msg)
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
		b := appendJSONString([]byte(`{"error":`), "query not supported by tsd: "+string(q))
		ctx.SetBody(append(b, '}'))
	}
}

func (a *ingestAPI) lpDecoder() *influx.Decoder {
	if d, ok := a.lpDecs.Get().(*influx.Decoder); ok {
		return d
	}
	o := a.w.Options()
	d, _ := influx.NewDecoder(&influx.Options{MaxTags: o.MaxTags, Separator: o.InfluxSeparator})
	return d
}
