// Package api is tsd's network edge: it owns the one listener on port 4242
// (tsd.network.port), tells HTTP from telnet by the first byte of each
// connection, and routes HTTP requests to the OpenTSDB, Prometheus and
// InfluxDB endpoints (Routing, below; docs/opentsdb.md lists them, with
// those not built yet). It is the only package
// that imports github.com/valyala/fasthttp, and it does not use the net/http
// server (internal/lint enforces both), so nothing below it sees a
// fasthttp.RequestCtx.
//
// # Connections
//
// Serve accepts connections and reads one byte from each. An ASCII capital
// letter (A-Z, the first byte of every HTTP method) hands the connection, with
// that byte replayed, to fasthttp; anything else is the telnet line protocol
// and goes to Options.Telnet (the daemon wires ingest/service's handler); a
// Server built without one, as HTTP-only tests build it, closes such a
// connection and logs it.
//
// A first byte 0x16 (a TLS handshake record) starts a TLS session when
// Options.TLS names a certificate (tls.go; otherwise the connection is
// logged and closed): crypto/tls runs over the tracked connection, so the
// handshake reads under the head deadline and writes under the write
// credit, and inside the session the first byte of plaintext picks HTTP
// or telnet the same way. Certificates are read again every
// TLSOptions.ReloadInterval and on Server.Reload (the daemon's SIGHUP); a
// file that does not load keeps the old ones. With TLSOptions.Required a
// plaintext HTTP request is answered 400 and a plaintext telnet
// connection gets one error line and is closed. ConnTLSState,
// RequestTLSState and ClientCertificate give handlers the verified client
// certificate. Server.Close stops the
// listeners, closes connections still being sniffed or served as telnet,
// lets in-flight HTTP requests finish for at most Options.ShutdownTimeout,
// then closes whatever is left and waits for every goroutine it started.
//
// # Deadlines and the connection limit
//
// A connection's reads run under one of two deadlines, which the
// connection wrapper keeps itself (fasthttp's ReadTimeout and IdleTimeout
// are off; conn_read.go):
//
//   - The head deadline, Options.ReadHeaderTimeout (default 30 s), fixed
//     when a request head starts and not extended by progress, so a client
//     trickling bytes is cut off. The first head starts at the accept and
//     takes in the byte that tells HTTP from telnet (and a TLS handshake,
//     when there is one, since it reads through the wrapper) and ends with
//     HTTP's headers or telnet's first '\n' (of plaintext, under TLS). Each later HTTP request's head
//     starts with its first byte. fasthttp reports the end of the headers
//     through its HeaderReceived hook, before it reads any of the body, so
//     a body however long and slow is never under this deadline. An HTTP
//     client that misses it is answered 408; any other connection is
//     closed.
//   - The idle deadline, Options.IdleTimeout (default 5 min): outside a
//     head, each read may wait that long for a byte (between HTTP
//     requests, inside a body, and on telnet after the first line, between
//     and inside lines). Progress resets it; time the server spends on a
//     request does not count, since the deadline is moved before each read.
//     It is moved only when less than IdleTimeout is left, to at most a
//     sixteenth more, so most reads cost one clock read.
//
// Past Options.MaxConns open connections (default 10,000), a new
// connection is closed as soon as it is accepted, so clients can never
// take the descriptors the store needs (the daemon lowers the limit to
// its open-file limit less the store's reserve). Refusals and deadlines
// are counted (Server.ConnStats) and logged through Options.RateLog, one
// line per client and kind a window: conn.limit and conn.read_header_timeout
// at WARN, conn.idle_timeout at INFO.
//
// # Routing
//
// A request is routed in this order:
//
//  0. A GET of /api/v1/query_range whose answer the PromQL answer cache
//     keeps, found by the raw query string, is answered before routing
//     (shortcut.go); a server with access control, CORS domains or TLS
//     required has no shortcut.
//  1. Exact paths of the other APIs (Prometheus /api/v1/query and friends,
//     also under /prometheus/api/v1/...; InfluxDB /write, /api/v2/write,
//     /ping, /query; /metrics; /api/status and /api/status/series; /, and
//     every path under /ui/, the web UI's files, package api/ui), so a
//     Prometheus path wins over OpenTSDB's versioned alias of the same
//     name. The one shared path, /api/v1/query, is Prometheus's (package
//     promapi) only when the request has a query parameter in the URL or a
//     form body; otherwise it is OpenTSDB's /api/query (m, tsuid or a JSON
//     body).
//  2. OpenTSDB's scheme: /api/<endpoint>[/...] or /api/v<N>/<endpoint>[/...],
//     where <endpoint> is lower-cased and matched against the OpenTSDB table.
//     N above 1 is 501 and a version that is not an integer is 400, with
//     OpenTSDB's messages.
//  3. Anything else is 404 {"error":{"code":404,"message":"Endpoint not found"}}.
//
// "/" answers a client whose Accept asks for HTML (a browser) with the
// web UI's page, and any other with a text list of the endpoints
// (index.go).
//
// Options.Mode (tsd.mode) removes the write routes (ReadOnly) or the
// query routes (WriteOnly) from the tables, so they answer 404 as in
// OpenTSDB (mode.go).
//
// Before routing, a server with Options.CORSDomains applies OpenTSDB's
// CORS (browser.go): a listed Origin gets the Access-Control headers and
// its preflight OPTIONS is answered 200; another origin is answered 200
// with an error body. Handlers of requests that change data call
// refuseStateChangingGET, which answers a GET (method_override included)
// 405 unless Options.AllowStateChangingGET.
//
// Both tables live in routes.go. An endpoint whose issue has not landed has a
// nil handler and answers 501 with OpenTSDB's error JSON naming it; an issue
// that builds the endpoint replaces the nil with its handler method. So does
// an endpoint of a server built without the part it needs (no Query, no
// meta service, no annotation store): the daemon always has them, and on
// its port 501 is left for OpenTSDB's own (an API version above 1,
// /api/uid/<other>); RouteNames lists the
// routes for the test that walks them.
//
// # Access control
//
// With Options.Auth set (tsd.auth.config; package api/auth), a routed
// request runs only when its credentials name a user whose role covers
// the route: routeRoles in routes.go, next to the route tables, gives each
// route's role for reading (GET, HEAD) and for changing (other methods, a
// GET's method_override), and a route it does not list needs admin, so a
// new route is closed until it is given a role. Credentials are an
// Authorization header (Basic, Bearer, or Token as Telegraf's InfluxDB v2
// output sends it), InfluxDB 1.x's u and p parameters on its paths, or a
// verified TLS client certificate whose CN is a user. Missing or wrong
// credentials are answered 401 with WWW-Authenticate, a role short of the
// route's 403, each in the route's error form (OpenTSDB's, the
// Prometheus API's, InfluxDB's, remote_write's text); a delete through
// /api/query needs admin, checked once the query is parsed. Options.OpenPaths
// are served without credentials, and a path that is no route is 404 for
// anyone. Every refusal and every admin action let through goes to the
// audit log (auth.Authenticator.Audit, rate-limited per client).
//
// # Request bodies
//
// fasthttp streams request bodies (Server.StreamRequestBody): only the first
// 8 KiB is read before the handler runs. The ingest endpoints (endpoint.stream)
// read the rest themselves: Influx lines are gunzipped and parsed as they
// arrive, holding 1 MiB of the in-flight budget, not the body; /api/put
// likewise decodes its JSON one data point at a time through the decoder's
// window (1 MiB per point at most, 413 naming a longer one), committing
// every 4096 points, and its ?details answer keeps at most 4 MiB of errors
// (the rest counted as errorsOmitted); remote_write reads its snappy block
// whole, then decodes it. The limit (Options.MaxRequestBodySize) applies to
// decompressed bytes; a declared Content-Length over it is 413 unread and
// closes the connection. Every other endpoint gets its body buffered, up to
// the limit, before its handler runs, so PostBody and PostArgs work as
// usual. What a handler leaves unread of a body is drained (up to 1 MiB)
// after it returns, or the connection is closed, since those bytes would
// otherwise be read as the next request.
//
// # A body cut by its limit
//
// Streamed bodies are stored as they are decoded, /api/put and Influx in
// commits of 4096 points, so a body over the limit is refused part way: the
// points decoded before the limit are committed, nothing after it is read,
// and the 413 says exactly what landed. /api/put answers OpenTSDB's error
// object with the summary's counts beside it,
// {"error":{"code":413,...,"details":"...; N data points before it were
// written, M failed"},"success":N,"failed":M} (failed: refused as bad data
// or throttled; ?details adds their errors); the same for one data point
// over its 1 MiB limit. /write and /api/v2/write answer InfluxDB's error
// shape ({"error":...} and {"code":"request too large","message":...})
// ending "; N points written", as do their 400 for a body that breaks
// off or does not decompress and their 503 for throttled points.
// remote_write decodes a snappy block only whole, so a body over the
// limit writes nothing; every remote_write answer, errors included,
// carries X-Prometheus-Remote-Write-Samples-Written (and the Histograms
// and Exemplars headers, always 0) counting what landed.
//
// # Responses
//
// Errors use OpenTSDB's shape {"error":{"code":C,"message":M[,"details":D]}}
// with the HTTP status equal to C and Content-Type
// "application/json; charset=UTF-8". tsd never adds OpenTSDB's Java "trace".
// On OpenTSDB's endpoints (and their 404s and route errors), when
// Options.JSONP is set (otherwise ?jsonp is answered 400), ?jsonp=fn
// writes every JSON answer, errors included, as fn(<json>) with the same
// status and content type (a gzipped answer is inflated first); unlike
// OpenTSDB, a callback that is not a dotted JavaScript identifier is
// refused with 400, so a link cannot inject script. The Prometheus,
// InfluxDB and remote-write paths ignore jsonp.
// Handlers must not keep the fasthttp.RequestCtx, or any slice taken from
// it, after they return (fasthttp reuses them); copy what must outlive the
// request.
//
// # Queries: slots and streamed answers
//
// /api/query (and /api/query/exp, /api/query/last, /api/search/*, GET
// /api/uid/tsmeta?m=) and
// the Prometheus query, query_range, series, labels and label values
// endpoints share one set of Options.MaxConcurrentQueries slots (package
// api/admit): a query takes one after its request parses and before it
// reads, waiting in a queue of at most Options.MaxQueuedQueries for at
// most the query timeout; past the queue, or the wait, it is answered 503
// with Retry-After, in OpenTSDB's error JSON or as Prometheus's
// {"status":"error","errorType":"unavailable",...}.
//
// Answers are written by package api/answer. An answer that ends within
// 64 KiB is sent whole, as before (Content-Length; /api/query gzips one of
// 1400 bytes or more for a client that accepts gzip, and ?jsonp wraps
// it). A longer one is streamed with chunked transfer encoding, made a
// part at a time on the connection's goroutine, each part under a slot
// given back before the part is written, so a client that stops reading
// holds no slot and its answer holds one part: /api/query answers a
// group at a time (query.Stream), the others walk their result in memory.
// A streamed /api/query is gzipped as a stream for a client that accepts
// gzip; ?jsonp wraps a streamed answer as it goes out. An HTTP/1.0 client
// gets the parts without chunked encoding, the body ending with the
// connection's close.
//
// # Compression
//
// A whole answer of 1400 bytes or more (about one packet: a shorter one
// shrinks without saving a packet, and costs both ends the work) is
// gzipped for a client that accepts gzip, /api/query's and the
// Prometheus routes' alike, at the fastest level, by answer.AppendGzip
// on the request's own goroutine. fasthttp's gzip of a whole body hands
// it to a worker goroutine and waits: two goroutine switches, each of
// which can wake a sleeping thread. On a 2-core VM that cost a cached
// range answer of 1.2 KB about 0.1 ms of its 0.25 ms round trip, and
// gzip and gunzip of a body that fits a packet most of the rest.
// Streams are gzipped as they are written (above); a client that takes
// only deflate or zstd is left to fasthttp.
//
// The status of a streamed answer is sent with its first part, so a
// failure after it (tsd.query.limits.output_points passed while reading,
// a timeout, the store failing) cannot become a 413 or a 5xx: the answer
// then ends with a newline and OpenTSDB's error object, e.g.
//
//	...,"1700003590":42
//	{"error":{"code":413,"message":"Sorry, the answer has more than our limit of 10000000 data points (tsd.query.limits.output_points). ..."}}
//
// and without the chunked encoding's last chunk: the connection closes,
// so an HTTP client reports a truncated transfer (curl exits with 18,
// Go's client returns io.ErrUnexpectedEOF), a JSON parser an unfinished
// document, and a person reading the body why it stopped. Such a cut is
// logged (rate-limited per client) and counted (AnswerStats). An
// OpenTSDB query whose plan bounds its answer over the output limit is
// refused 413 before reading (see package query/opentsdb).
//
// # Write deadline
//
// Every connection, HTTP or telnet, writes under Options.WriteTimeout
// (conn_write.go): the connection holds a credit of that long, which
// time spent waiting for the client spends and bytes the client takes
// earn back at Options.MinWriteRate, so a slow reader is served and a
// stopped one is closed, as is one taking a few bytes per wait. The close
// frees what the connection holds (fasthttp's buffers, a streamed
// answer's part and its query's paused state) and is counted and logged.
//
// # What each request leaves behind
//
// Once a handler returns, the server records the request (observe.go):
// its duration in Metrics' histograms by route (the route table's name,
// or name/sub for the sub-routes routeRoles lists, "unmatched" for none:
// never the raw path, so the series are bounded) and status code, and by
// ingest protocol or query API for those routes; a 4xx or 5xx answer
// (but 401 and 403, which the audit log has) at INFO with its route and
// the start of its body; a query slower than Options.SlowQueryThreshold
// at WARN with its text; and a line of the access log when one is set
// (accesslog.go: a bounded queue to one writer goroutine, lines dropped
// and counted rather than waited for). A write request that refused
// points logs one WARN line with its client, protocol, count and first
// error (ingest_log.go). Every line a client can repeat goes through the
// rate-limited log. The observers of each route are made in New, so a
// request costs atomic adds, not a lookup by name.
//
// /metrics is Gather: Metrics' registry (Go runtime, process, the
// histograms) and Options.Stats, the same list /api/stats serves, turned
// into metrics by statsCollector; the two are gathered together, and a
// name both define is an error.
package api
