// Package textimport reads OpenTSDB's import text format, the input of
// `tsdb import` and of tsd import: one point a line,
//
//	<metric> <timestamp> <value> [<tagk=tagv> ...]
//
// the words and rules of a telnet put line without its "put" (package
// ingest/telnet parses each line, so a line import takes is exactly a
// line telnet takes, with the same error text). Empty lines and lines
// whose first byte is '#' are skipped. A stream starting with gzip's magic
// bytes (1f 8b) is decompressed, whatever its name.
//
// # Escapes
//
// A name holding a space or '=' (possible with
// tsd.core.tag.allow_specialchars) cannot be written as a plain word, so
// tsd export writes "\ " for a space, "\=" for '=' and "\\" for a
// backslash, and this reader reads them back: the name a.b\ c is "a.b c".
// A backslash before any other byte is itself. Names are checked after
// unescaping, with the rules of the configured special characters. A line
// with escapes must not hold the bytes 0x01 to 0x03, which the reader uses
// to carry escaped bytes through the put parser.
//
// # Errors and lifetime
//
// Reader follows ingest/parse's Decoder contract: Next gives a point or a
// refused line (Bad, a *LineError with the line's number and the put
// parser's reason); Err is what stopped the stream (a read or gzip error).
// A point's names alias the reader's buffers and are valid until the next
// Next. Memory is bounded by Options.MaxLineBytes: a longer line is
// refused, not buffered.
package textimport
