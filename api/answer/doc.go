// Package answer writes HTTP answers that may be too large to build
// whole, for the query endpoints of package api and api/promapi.
//
// # Whole or streamed
//
// An answer comes from a Source, which appends its body's next bytes on
// each call (a query.Stream running its query a group at a time, or an
// encoder walking a result in memory). Write makes the first ChunkSize
// bytes (64 KiB) before answering. An answer that ends within them is sent
// whole, exactly as a handler setting its body would (Content-Length, and
// gzip from Options.MinGzip bytes when allowed and accepted), so small
// answers cost what they did. A longer one is streamed with chunked
// transfer encoding through fasthttp's body stream (a BodyWriterTo, on the
// connection's own goroutine): each further part of about ChunkSize bytes
// is made, gzipped when allowed and accepted, and written before the next
// is made. One answer therefore holds one part, its compressor and its
// Source's paused state, however large the answer. An HTTP/1.0 client,
// which knows no chunked encoding, gets the parts on the connection
// fasthttp hands over after the handler (Hijack), the body ending with
// the connection's close.
//
// # Slots
//
// The caller takes a query slot (api/admit) before making the Source.
// Write gives it back once the first part is made; a streamed answer
// takes one again (Resume) for each later part and gives it back before
// writing it. A client that stops reading blocks only its own write, which
// the connection's write deadline ends, and holds no slot meanwhile.
//
// # Failures
//
// A Source failing on the first part leaves the request unanswered:
// Write returns the error for the caller to answer in its protocol's form
// (a 413 for a limit, a 408 for a timeout, ...). Once a streamed answer
// has sent bytes its status cannot change: a failure then appends
// Options.Cut's text (the protocol's error object, say) to what was sent,
// calls Options.Failed (to count and log it), and ends the response
// without the chunked encoding's last chunk, so the connection closes and
// every HTTP/1.1 client sees a truncated transfer (curl exits 18, Go's
// client returns io.ErrUnexpectedEOF) rather than a complete answer; a
// person reading the body sees why it stopped (an HTTP/1.0 client, whose
// body ends with the close anyway, has only that text).
//
// Options.Ended learns once how each answer ended, whole or streamed:
// a streamed answer is over when its last part reached the connection,
// not when its first part was made, so a caller listing running
// queries (/api/stats/query) keeps a slow reader's query listed.
package answer
