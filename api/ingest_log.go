package api

import (
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// logRefused writes the one WARN line of a write request whose points
// were refused, bad or throttled: the client, protocol, count and first
// error, within the rate-limited log's budget per client and protocol
// (kind ingest.refused.<protocol>; telnet's is ingest.refused.telnet).
// This is the log /api/put's "Please see the TSD logs" points at.
func (a *ingestAPI) logRefused(ctx *fasthttp.RequestCtx, protocol string, n int, first string) {
	if n <= 0 {
		return
	}
	a.s.rlog.Warn(refusedKinds[protocol], ratelog.Client(ctx.RemoteAddr()), "points refused",
		"protocol", protocol, "points", n, "first_error", first)
}

// refusedKinds are the ratelog kinds of refused writes, by protocol.
var refusedKinds = map[string]string{
	ProtocolPut: "ingest.refused.put", ProtocolInflux: "ingest.refused.influx",
	ProtocolRemoteWrite: "ingest.refused.remote_write", ProtocolRollup: "ingest.refused.rollup",
	protocolHistogram: "ingest.refused.histogram",
}

// protocolHistogram names /api/histogram's writes in the refused-write
// log. It is not one of tsd_ingest_request_duration_seconds' protocols.
const protocolHistogram = "histogram"

// noteErr keeps the first refusal's message for the log.
func (r *putResult) noteErr(msg string) {
	if r.firstErr == "" {
		r.firstErr = msg
	}
}

// noteErr keeps the first refusal's message for the log.
func (c *pointCount) noteErr(err error) {
	if c.firstErr == "" {
		c.firstErr = err.Error()
	}
}
