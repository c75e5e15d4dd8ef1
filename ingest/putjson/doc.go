// Package putjson parses OpenTSDB /api/put bodies (docs/opentsdb.md, HTTP
// API): one data point object or an array of them,
// as Telegraf (an array with a newline after each element), tcollector and
// scollector send, with a hand-written streaming JSON reader: no
// encoding/json, no reflection, no allocation per point.
//
// # Data points
//
//	{"metric": "sys.cpu", "timestamp": 1356998400, "value": 42.5, "tags": {"host": "web01"}}
//
// Fields may come in any order; unknown fields are skipped; a repeated
// field or tag key keeps its last value (as Jackson does). Scalars are
// read as OpenTSDB's Jackson mapping reads them: a number or boolean
// where a string is expected is its JSON text ("metric": 7.0 is the metric
// "7.0"); values may be JSON numbers (1e+21, 5e-07) or strings and are
// typed by OpenTSDB's rules (parse.ParseOpenTSDBValue, from the text as
// sent); the timestamp may be a number (a fraction is truncated, as
// Jackson does) or a numeric string, in seconds or milliseconds by the
// same rule as telnet (parse.OpenTSDBMillis).
//
// # Per-point errors
//
// A point that fails validation is yielded with a *PointError carrying
// OpenTSDB's detail message, checked in its order: "Metric name was
// empty", "Invalid timestamp", "Empty value", "Unable to parse value to a
// number", "value is NaN or Infinite: ...", "bad timestamp=...", "Too many
// tags: ...", then the name rules ("Invalid metric name (\"x!\"): illegal
// character: !", "Invalid tag value: null"). Raw returns the element's
// JSON bytes as sent; AppendEcho writes it as OpenTSDB echoes a refused
// point in the details answer (its IncomingDataPoint through Jackson:
// the value as a string, tags in java.util.HashMap order). Where tsd
// deliberately differs:
// zero tags are allowed (no "Missing tags"), the tag limit is
// Options.MaxTags (default 32), and a well-formed element of the wrong
// shape (an object where a string belongs, a non-numeric timestamp
// string, an array element that is not an object) fails only its own
// point, where OpenTSDB fails the whole body.
//
// # Body errors
//
// A body that is not JSON (or not an object or array, or has trailing
// bytes) stops the Decoder with a *SyntaxError naming the byte offset;
// points yielded before it stay yielded (the handler may roll them back).
// Nesting deeper than MaxDepth inside a point is a syntax error, so
// hostile input never recurses or allocates without bound.
//
// # Reader mode
//
// ResetReader decodes a body as it is read (a chunked or gunzipped
// request) through a reused window that holds the current element and
// read-ahead, never the body: memory is bounded by MaxElementBytes
// (default 1 MiB). Elements are parsed by the same code as with Reset; an
// element cut by the window's end is parsed again once the window holds
// at least twice as much of it, so both modes yield the same points,
// point errors, Raw bytes and syntax errors (offsets from the body's
// start) on any body and any read sizes. Only two things differ: an
// element longer than MaxElementBytes stops the Decoder with a
// *TooLargeError naming its index and offset, and a read error stops it
// with that error (the syntax error its early end would otherwise be).
// After a single object, the rest of the stream is read to check it is
// only spaces.
//
// # Lifetime
//
// A Point, its names and Raw alias the body, the window or the Decoder's
// buffer and are valid until the next Next, Reset or ResetReader; the
// body must not change meanwhile.
package putjson
