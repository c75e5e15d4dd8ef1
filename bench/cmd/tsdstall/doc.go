// Command tsdstall measures what clients that never read their answers
// cost a running tsd, and what a healthy client sees meanwhile: the
// figure of issue 17's first item.
//
// It builds cmd/tsd (or runs -bin), starts it on a fresh data directory
// on 127.0.0.1, loads cpu_usage_user of -hosts hosts over -span at 10 s
// (the bench dataset's highcard shape, 1,000 series x 2 h = 720,000
// points by default) over telnet, and restarts it so the rows are in the
// store (-head keeps them in the head). Then:
//
//  1. idle: reads the large query's answer once (every series, the whole
//     span, raw, grouped by host: one group per series), runs it 3 times
//     and a healthy dashboard query (the query set's single-1h: one host,
//     one hour, 1m-max) -n times, each on a keep-alive connection that
//     reads its answers, and reads the daemon's resident set (VmRSS);
//  2. stalled: opens -clients connections that each send the large query
//     and never read a byte; samples the resident set every 100 ms while
//     the daemon's CPU settles (their queries done or blocked on writing)
//     and -hold more, then runs the healthy query -n times and the large
//     one 3 times again, and closes the stalled connections;
//  3. after: reads the resident set 10 s later.
//
// It prints the resident set idle and the largest one sampled while the
// clients stalled, the difference and their ratio, and each healthy
// query's mean latency idle and while the clients stalled, and their
// ratio. The measuring window (about -hold plus the settling and the
// healthy runs) must stay under the daemon's write timeout
// (tsd.network.write_timeout, 1 minute), which would close the stalled
// connections; -tsd-args passes more daemon flags.
//
// Usage:
//
//	go run ./bench/cmd/tsdstall                      # 1,000 series x 2 h, 100 stalled clients
//	go run ./bench/cmd/tsdstall -hosts 20 -clients 5 # seconds
package main
