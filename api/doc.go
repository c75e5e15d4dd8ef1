// Package api is tsd's network edge: it owns the one listener on port 4242
// (tsd.network.port), tells HTTP from telnet by the first byte of each
// connection, and routes HTTP requests to the OpenTSDB, Prometheus and
// InfluxDB endpoints listed in shared/spec/routes.md. It is the only package
// that imports github.com/valyala/fasthttp, and it does not use the net/http
// server (internal/lint enforces both), so nothing below it sees a
// fasthttp.RequestCtx.
//
// # Connections
//
// Serve accepts connections and reads one byte from each. An ASCII capital
// letter (A-Z, the first byte of every HTTP method) hands the connection, with
// that byte replayed, to fasthttp; anything else is the telnet line protocol
// and goes to Options.Telnet. Until the ingest package provides a telnet
// handler, such a connection is closed and logged. Server.Close stops the
// listeners, closes connections still being sniffed or served as telnet,
// lets in-flight HTTP requests finish for at most Options.ShutdownTimeout,
// then closes whatever is left and waits for every goroutine it started.
//
// # Routing
//
// A request is routed in this order:
//
//  1. Exact paths of the other APIs (Prometheus /api/v1/query and friends,
//     also under /prometheus/api/v1/...; InfluxDB /write, /api/v2/write,
//     /ping, /query; /metrics; /), so a Prometheus path wins over OpenTSDB's
//     versioned alias of the same name. The one shared path, /api/v1/query,
//     is Prometheus's (package promapi) only when the request has a query
//     parameter in the URL or a form body; otherwise it is OpenTSDB's
//     /api/query (m, tsuid or a JSON body).
//  2. OpenTSDB's scheme: /api/<endpoint>[/...] or /api/v<N>/<endpoint>[/...],
//     where <endpoint> is lower-cased and matched against the OpenTSDB table.
//     N above 1 is 501 and a version that is not an integer is 400, with
//     OpenTSDB's messages.
//  3. Anything else is 404 {"error":{"code":404,"message":"Endpoint not found"}}.
//
// Both tables live in routes.go. An endpoint whose issue has not landed has a
// nil handler and answers 501 with OpenTSDB's error JSON naming it; an issue
// that builds the endpoint replaces the nil with its handler method.
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
// # Responses
//
// Errors use OpenTSDB's shape {"error":{"code":C,"message":M[,"details":D]}}
// with the HTTP status equal to C and Content-Type
// "application/json; charset=UTF-8". tsd never adds OpenTSDB's Java "trace".
// On OpenTSDB's endpoints (and their 404s and route errors) ?jsonp=fn
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
// /api/query (and /api/query/exp, /api/query/last, /api/search/lookup) and
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
// refused 413 before reading (see package query).
//
// # Write deadline
//
// Every connection, HTTP or telnet, writes under Options.WriteTimeout
// (conn_write.go): a write to the socket may wait that long for the
// client to take bytes, and starts the wait again each time it takes
// some, so a slow reader is served and a stopped one is closed. The close
// frees what the connection holds (fasthttp's buffers, a streamed
// answer's part and its query's paused state) and is counted and logged.
package api
