// Package load streams a dataset to a running tsd over one of its ingest
// protocols and measures what the client sees (points per second, request
// latency, errors) and what the server costs (CPU seconds and peak resident
// memory from /proc/<pid>). It is the library behind bench/cmd/tsdload.
//
// Protocols and what one request is:
//
//   - telnet: Batch "put" lines written on a connection, then, with Barrier
//     on (the default), a "version" command whose reply (BarrierLines
//     lines, 2 for OpenTSDB's) tsd sends only after every earlier put of the
//     connection is in its log: the latency is the time to durability. Lines
//     starting "put:" are the server's error replies and count as errors.
//     With Barrier off, lines are streamed and a reader counts error lines.
//   - json: one POST /api/put with a JSON array of Batch points.
//   - influx: one POST /write?precision=ns of Batch/10 lines (ten fields a
//     line).
//   - remotewrite: one POST /api/v1/write, snappy protobuf, Batch series
//     with one sample each.
//
// An HTTP answer outside 2xx is an error, counted by status. The source is
// encoded by one producer goroutine ahead of Conns sender goroutines, or
// entirely before the clock starts with Preload.
package load
