// Package jsonw is tsd's one JSON writer: every answer tsd builds by hand
// (OpenTSDB's and Prometheus's HTTP APIs, InfluxDB's errors, the stored
// annotation cell, /api/put's details) is appended to a byte slice with
// these functions. There is no reflection, and nothing allocates but
// AppendSortedMap's list of keys: each function appends to dst and
// returns the extended slice, as strconv's Append functions do.
//
// # Strings
//
// A Mode says how a string is escaped; the three are the byte-exact forms
// of the writers tsd's answers must match. All three write '"' and '\' as
// \" and \\, \n, \r and \t by name, the other bytes below 0x20 as \u00xx,
// and DEL and valid non-ASCII text as they are, in UTF-8.
//
//   - JSON: tsd's own answers, and json-iterator's Stream.WriteString,
//     with which Prometheus writes label sets. Lower-case hex digits. An
//     invalid UTF-8 byte becomes U+FFFD (json-iterator copies it; the
//     output here is always valid JSON).
//   - Jackson: OpenTSDB's Jackson writer, for the shapes that echo
//     OpenTSDB's own serialisation. \b and \f by name too, upper-case hex
//     digits (\u001F), an invalid UTF-8 byte as U+FFFD.
//   - HTML: json-iterator's standard-library mode, with which Prometheus
//     writes every other string (warnings, errors, label name and value
//     lists). JSON's escapes plus <, > and & as \u003c, \u003e and
//     \u0026, U+2028 and U+2029 as \u2028 and \u2029, and an invalid UTF-8
//     byte as the escape \ufffd.
//
// Each invalid byte is replaced on its own: a truncated three-byte
// sequence is two replacements.
//
// # Numbers
//
// Integers are strconv.AppendInt's. Jackson writes a double as Java's
// Double.toString and a float as Float.toString (AppendJavaDouble,
// AppendJavaFloat): plain decimal with at least one fractional digit for
// magnitudes in [1e-3, 1e7), otherwise d.dddE[-]n, the shortest digits
// that read back to the value. AppendJacksonDouble quotes NaN and the
// infinities, as Jackson's default QUOTE_NON_NUMERIC_NUMBERS does.
// Prometheus's sample values have their own form, kept in api/promapi,
// whose plain decimals AppendFixed writes (strconv's 'f' form).
//
// The shortest digits of a double that is not whole come from shortest.go,
// Giulietti's Schubfach (the algorithm of Java 19's Double.toString), in
// under half of strconv's time; strconv stays the reference: the tests
// compare the two on millions of values and a fuzz target, and shortest
// hands the cases it does not prove (subnormals, the significand 2^52,
// exact ties) to strconv.
//
// # Composites
//
// Objects and arrays are written by their callers, with constant keys as
// literals (`,"metric":`); AppendStrings, AppendKey, AppendPair,
// AppendTags, AppendSortedMap and AppendNullable cover the shapes every
// API repeats.
package jsonw
