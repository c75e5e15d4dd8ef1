// Package export writes stored points as text, for tsd export: every
// point of the selected series of a metric over a time range, read
// through query/read (the one reader of stored rows) with Reader.Visit, a
// row at a time, so memory is bounded by the rows in flight and
// Options.SeriesPerVisit series' names, whatever the store's size.
//
// # Formats
//
// OpenTSDB (tsdb import's text format, read back by ingest/textimport):
//
//	<metric> <timestamp> <value> <tagk=tagv> ...
//
// a name's space, '=' and backslash escaped as "\ ", "\=" and "\\";
// timestamps in seconds when whole (and not written as milliseconds),
// else milliseconds; integers as integers and floats in Go's shortest form
// with a '.' or an exponent, so import reads back the same float64 (and
// a float32-exact value as float32, as the write path types it).
//
// Prometheus (the text exposition format, with timestamps in ms): one
// "# TYPE <name> untyped" line per metric, then
//
//	<name>{<label>="<value>",...} <value> <timestamp ms>
//
// a metric or tag name that is not a legacy Prometheus name
// ([a-zA-Z_:][a-zA-Z0-9_:]*, [a-zA-Z_][a-zA-Z0-9_]* for labels) written
// quoted, in Prometheus 3's UTF-8 form: {"sys.cpu.user",host="web01"}.
// Label values escape '\\', '"' and newline.
//
// Influx (line protocol, ns timestamps): measurement the metric, the tags
// as tags, one field "value" (integers with the i suffix):
//
//	<metric>,<tagk>=<tagv> value=<v> <timestamp ns>
//
// commas, spaces and '=' escaped with a backslash as the protocol wants.
// NaN and infinities have no line-protocol form and are skipped (counted
// in Stats.Skipped). Written back to tsd's Influx endpoint, the metric
// becomes <metric>_value, as that endpoint names fields.
//
// # Order
//
// Lines of one series' row come together in time order; rows of
// different series interleave (the reader visits series at once).
// Every point is written once.
package export
