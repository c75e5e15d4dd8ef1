// Command promserve is the Prometheus peer of tsdquery over HTTP: it
// generates the devops dataset tsdload sends (same generator, seed and
// defaults: 100 hosts, 24 h, integer values), appends it to Prometheus's own
// tsdb in -dir, compacts the head into one block as bench/harness does
// (data at rest, as tsd's figures read flushed rows), and serves the paths
// tsdquery uses with Prometheus's PromQL engine:
//
//   - GET/POST /api/v1/query_range and /api/v1/query, parameters and error
//     classes as Prometheus's web/api/v1 (bad_data 400, execution 422,
//     timeout 503, canceled 499, internal 500);
//   - GET /api/version, a small JSON body, for tsdquery's transport floor.
//
// The peer must cost what Prometheus costs, no less and no more, so it is
// built as Prometheus's server is: net/http, the engine options of
// Prometheus 3 (lookback 5 m, 50 M samples, 2 m timeout, @ modifier and
// negative offsets on) and the answer encoded whole with json-iterator
// (ConfigCompatibleWithStandardLibrary), sample pairs written by
// Prometheus's util/jsonutil (MarshalTimestamp, MarshalFloat), then
// written in one Write. It leaves out what a Prometheus server adds around
// that: the fanout over remote storage, the active query tracker's mmapped
// file, request metrics and gzip (tsdquery asks for none), so its figures
// are if anything a little faster than a real Prometheus.
//
// It prints one line on stdout when it is ready and serves until SIGINT or
// SIGTERM; a temporary -dir is removed at exit.
//
// Usage:
//
//	promserve -hosts 100 -span 24h -addr 127.0.0.1:9090 &
//	tsdquery -api promql -only 'single-1h|groupby' -n 500 -peer 127.0.0.1:9090
package main
