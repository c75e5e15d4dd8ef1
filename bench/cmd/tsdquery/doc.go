// Command tsdquery runs the bench query set (package bench/queryset) against
// a running tsd, each query as an OpenTSDB /api/query request and as PromQL
// range queries, a chosen number of times, and prints mean, p50 and p99 per
// query and API. Load the dataset first with tsdload (same -span; the
// highcard-10 query needs the highcard shape with 100,000 hosts).
//
// Requests go out on one keep-alive connection that the measuring
// goroutine writes and reads itself, without compression; a run is timed
// from the request written to the answer read, the answer checked after.
// -nethttp sends through net/http instead (its transport goroutines and
// gzip), for comparison.
//
// The table's first row is the transport floor: GET /api/version timed
// the same way, n times, on the same connection. On a shared virtual
// machine the round trip alone moves from about 0.04 ms to 0.2 ms within
// minutes, so each query figure is read against the floor beside it.
//
// -peer host:port names a Prometheus peer (bench/cmd/promserve: the same
// dataset in Prometheus's own tsdb, its engine behind net/http). Each
// PromQL query then runs there too, with the same n and ranges, on a
// connection of its own driven the same way, the two servers in turn, one
// run each at a time (so a slow minute of the machine falls on both); the
// peer's row carries the ratio tsd/peer of the means in a tsd/peer
// column, and a second floor row times GET /api/version on the peer's
// connection, interleaved the same way. OpenTSDB queries have no peer.
//
// Usage:
//
//	tsdquery -addr 127.0.0.1:4242 -n 20
//	tsdquery -api promql -only 'single|groupby' -n 50
//	tsdquery -api promql -only 'single-1h|groupby' -n 500 -peer 127.0.0.1:9090
package main
