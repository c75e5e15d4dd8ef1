// Command tsdbench runs tsd's benchmark figures beside their peers
// (Prometheus's tsdb and PromQL engine, raw Pebble, line-protocol/v2, prompb)
// on the pinned devops dataset and prints one Markdown table:
// figure | tsd | peer | ratio | runs.
//
// Usage:
//
//	go run ./bench/cmd/tsdbench                 # default size: 100 hosts x 1 day, median of 5 runs
//	go run ./bench/cmd/tsdbench -smoke          # seconds: 2 hosts x 12 h, 1 run (CI)
//	go run ./bench/cmd/tsdbench -runs 3 -only 'PromQL|append' -v
//
// Flags override the size's fields: -hosts, -span, -runs. -clock cpu (the
// default) times the CPU-bound rows (parsers, codecs, Prometheus appends,
// PromQL) with the process's CPU time, so other tenants of a shared machine
// barely move them; -clock wall uses the wall clock. Storage rows (fsync,
// several writers) always use wall time. -dir sets the scratch parent
// directory (default the system temp dir; it is removed at the end). -v logs
// every run to stderr. -cpuprofile FILE writes a CPU profile of the whole
// run; rows that label their sides (the rollup rows: rollup_query,
// rollup_ingest) can be split with go tool pprof -tagfocus.
package main
