// Package parse holds what tsd's ingest parsers share: the parsed point the
// protocol handlers consume, a line reader with a length limit, fast number
// parsing, OpenTSDB's value and timestamp rules, and name checking against a
// uid.Validator. It is pure: no I/O beyond the io.Reader a LineReader is
// given, no clock, no globals.
//
// # The parsed point
//
// Every parser (ingest/telnet, ingest/putjson, ingest/influx,
// ingest/promrw) yields a Point: a metric name, tags as (key, value) byte
// pairs in input order, and a series.Point whose T is milliseconds since
// the epoch and whose value keeps its type (int64, float32 exact, float64
// with its bits). Names are the decoded bytes (escapes resolved), UTF-8.
//
// Lifetime: a Point's Metric, Tags and every tag's Key and Value alias the
// parser's input or its internal buffers. They stay valid until the next
// call that advances the parser (Next, ParsePut, Reset); a caller that
// keeps them copies them (Point.Clone). The Tags slice itself belongs to
// the Point: parsers append into Tags[:0] so a reused Point allocates
// nothing once its capacity has grown.
//
// # Decoders
//
// The body decoders of the HTTP protocols (ingest/putjson, ingest/influx,
// ingest/promrw) are each a Decoder: Next walks the body's elements, Bad
// says why the current one is refused (nil for a point, Point), Err what
// stopped the body early. A refused element never stops the body. The
// HTTP API drains all three with one loop, each protocol keeping only its
// own answer.
//
// # Numbers
//
// ParseFloat reads decimal floats ([+-]digits[.digits][(e|E)[+-]digits])
// with an exact fast path (a mantissa below 2^53 scaled by at most 10^22 is
// one correctly rounded IEEE operation) and falls back to strconv for the
// rest, so its results are strconv's bit for bit. ParseInt is strict
// decimal with overflow detection. Neither allocates.
//
// # OpenTSDB rules (docs/opentsdb.md, Telnet)
//
// ParseOpenTSDBValue types a value as OpenTSDB does: text without '.', 'e'
// or 'E' is a strict int64 (Tags.parseLong, with its error texts); other
// text is a double, stored as float32 when (float)d == d and as float64
// otherwise; NaN and infinities are refused. OpenTSDBMillis applies the
// seconds-or-milliseconds rule: a timestamp with any of its upper 32 bits
// set is milliseconds (at most 9999999999999), otherwise seconds.
//
// # Names
//
// Names wraps a uid.Validator with a 256-entry table of the ASCII bytes it
// accepts, so the common all-ASCII name is checked with one lookup per
// byte; anything else goes to the Validator, whose *uid.NameError carries
// OpenTSDB's wording.
//
// # Lines
//
// LineReader splits a body (a byte slice, no copy) or a stream (an
// io.Reader, through one reused buffer) into lines ending in "\n", with
// "\r\n" accepted, numbering them from 1. A line longer than the limit is
// reported as too long, its first bytes kept for the error message, and
// the reader resumes after its end without buffering it. Extend joins the
// next physical line to the current one, for formats whose quoted strings
// may hold newlines (Influx string fields).
package parse
