// Package parsebench measures request-body parsers on the bench dataset's
// wire formats: the peers (github.com/influxdata/line-protocol/v2 for Influx
// lines, Prometheus's prompb with snappy for remote_write) and tsd's own
// parsers (InfluxTSD over ingest/influx, RemoteWriteTSD over snappy and
// ingest/promrw), each used as a Parser.
//
// A parser counts as having parsed a point when it has decoded the point's
// metric (or field), every tag, the value and the timestamp, so every side
// does the work an ingest path cannot skip.
package parsebench
