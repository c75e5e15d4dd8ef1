// Command tsdvm measures tsd against VictoriaMetrics single-node, the
// database users pick instead of OpenTSDB, on the same machine in the same
// run, and prints one table of both sides and their ratio.
//
// VictoriaMetrics v1.151.0 is built from the Go module proxy (go install
// with GOBIN set, cgo off) into a temporary directory and kept under the
// user cache directory, keyed by version, so later runs reuse it; it never
// enters tsd's go.mod. tsd is built from this checkout (go build
// ./cmd/tsd) unless -tsd names a binary. tsd runs with its defaults,
// rollups included; -rollups=false starts it with
// --tsd.rollups.enable=false, to measure the store without its rollup
// tables.
//
// For each protocol (Influx line protocol, OpenTSDB telnet, Prometheus
// remote_write) each daemon starts on a fresh data directory and free
// 127.0.0.1 ports (VictoriaMetrics with -retentionPeriod=100y, since bench/
// gen's dates are older than its default month, and -opentsdbListenAddr;
// its other flags at their defaults, caches on) and is loaded with the
// same dataset by package bench/load, the library behind tsdload. Telnet
// streams without the version barrier on both sides (VictoriaMetrics has
// none); tsd is also measured with one. A row gives points per second,
// the daemon's CPU seconds per million points and its peak resident memory
// (/proc/<pid>, package procstat), and the loader's own CPU seconds.
// Each binary is dropped from the page cache before its daemon starts, so
// both are read from disk as after a reboot: tsd's, just built, would
// otherwise be mapped in 2 MiB pages and read about 20 MB more resident.
// Each protocol loads -pairs times (default 3), tsd then VictoriaMetrics
// back to back, so that a slower minute of the shared machine falls on
// both; rows for the rate, CPU and memory then list every load and the
// median of the pairs' ratios. Sizes and queries follow the first pair.
//
// After the Influx load both sides settle and are measured on disk, in
// allocated blocks (what du counts): VictoriaMetrics after
// /internal/force_flush and /internal/force_merge, its data directory
// without cache/; tsd after POST /api/compact (flush the head, drain the
// compaction queue, compact the store), a clean stop and tsd compact
// --data, its whole data directory: a running tsd also holds the logs
// pebble keeps for reuse (up to three of 110 % of the memtable size), which
// a stop or restart drops, and the table prints that size too. Both sides
// are also measured right after a clean stop, against settled. The query
// set (package bench/queryset: the queries of the dataset's shape, so
// the four devops ones by default, highcard-10 with -shape highcard) runs as PromQL
// range queries, -n times each, on each side twice: after the load, rows
// still in tsd's head and in VictoriaMetrics' in-memory parts (after the
// first 20 queries, timed on their own), and again once settled, rows in
// the store; each row is a mean and the ratio of the means. In that first
// Influx pair both daemons stay up after their loads, and each query's
// runs take turns between them, -turn-runs at a time (default 10 of -n's
// 80): single runs of the means had moved 2-4x from one run to the next
// as the shared machine's speed changed. Until Stop 46 it was 20 runs in
// turns of 5. Each turn begins after a pause (the quiet wait below), and
// its first run pays for waking both processes up: on this VM 0.3-0.6 ms,
// on every server and on the floor alike, against 0.1-0.2 ms for the runs
// after it. In turns of 5 that wake-up was a fifth of a cached query's
// mean, and the one or two 1-7 ms stalls of the machine that 20 runs
// met moved a mean by half; 80 runs in turns of 10 halve the first and
// spread the second. Each side's connection for the means first
// answers one query off the clock, logged: a server's first answer on a
// connection carries the connection's set-up, 0.3-1 ms here on every
// server, which would fall on whichever side went first. The first 20
// queries keep it. With -turns each turn is logged with the CPU every
// daemon process used during it: a side busy with its own background
// work (merges, flushes, the row cache's reserve) while the other's
// answers are timed shows there. Before each turn the other daemons
// must have gone quiet (at most 1 ms of CPU in 50 ms, waited for up to
// 3 s, the wait logged): the timed side's turns then carry its own
// background work, not the other's. Each daemon's first 20 queries wait
// likewise, up to 30 s, for the other to finish with its load.
//
// A third process, the floor (floor.go: this binary run as "tsdvm
// floor"), answers every request with the bytes of tsd's answer to
// single-1h and computes nothing. It takes a turn after the two daemons'
// on single-1h, and its mean is printed beside VictoriaMetrics': what the
// machine's round trip alone costs a query the answer cache serves.
// The table also counts, for each of the three, the single-1h turns at
// loopback speed (median under 60 µs): on this 2-core VM a turn of
// cached answers either stays on one CPU, about 15 µs a round trip, or
// has each process wake the other on the other CPU, 100-200 µs. The
// scheduler draws that at each turn's start; over Stop 49's six runs and
// one of Stop 50 the floor drew the fast kind in 58 % of its turns and
// tsd in 36 %; in a scratch loop of tsdvm's client (bench/README.md,
// Stop 50) tsd drew it in 67 %, a bare fasthttp server answering the
// same bytes in 75 % and the floor in 82 %. The single-1h mean moves
// with that draw more than with either server.
//
// The query set's queries are fixed: after its first run, each is
// answered from each side's answer cache. With -vary (the default) every
// query is also timed, in the same turns, as TSBS sends its queries: each
// run names other hosts (as many as the query names, drawn from the
// dataset's) and ends at another second, the whole range inside the
// dataset (queryset.Query.Varied). Both sides of a turn get the same
// draws; no cache can serve a run, and the windows rarely line up with
// the hour. These rows time the work of a query, where the fixed ones
// mostly time a round trip.
//
// With -tsbs (the default) the devops dataset's rows also time TSBS's
// devops query types (queryset.TSBS: single-groupby-*, cpu-max-all-*,
// double-groupby-*) as TSBS's VictoriaMetrics generator writes them, one
// expression over all the metrics grouped by __name__, each run drawn as
// the varied runs are. Prometheus's engine refuses most of these (the
// names collide once max_over_time drops them); tsd answers them as
// VictoriaMetrics does (query/promql, Names kept by grouping). The set's
// own queries run one expression per metric, which both engines answer.
//
// With -grafana (the default) the set's queries are also timed as
// Grafana's Prometheus data source sends them from the Grafana server
// (queryset.Grafana): Go's net/http client, with its transport's
// goroutines, asking for gzip and inflating the answer, each query a POST
// of a form. tsdvm's own client sends GETs and asks for no compression,
// as curl does; these rows time what a dashboard's panel costs, gzip on
// both ends included, where VictoriaMetrics gzips every answer and tsd
// answers of 1,400 bytes or more (api's doc, Compression).
//
// Usage:
//
//	go run ./bench/cmd/tsdvm                       # 100 hosts x 24 h, 8.64 M points a protocol
//	go run ./bench/cmd/tsdvm -span 1h -hosts 10    # a quick look
//	go run ./bench/cmd/tsdvm -protos influx -n 0   # sizes only: the Influx load, settled, no queries
//	go run ./bench/cmd/tsdvm -protos influx -n 0 -rollups=false -values float
//	go run ./bench/cmd/tsdvm -shape highcard -hosts 100000 -span 1h -protos influx -pairs 1 -tuned-conns 0  # highcard-10
//	go run ./bench/cmd/tsdvm -protos influx -pairs 1 -tuned-conns 0 -vary=false -tsbs-n 500 -turn-runs 500  # TSBS's queries, 500 of each type back to back a side
package main
