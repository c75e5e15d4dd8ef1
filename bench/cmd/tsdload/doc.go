// Command tsdload streams the bench dataset (or a file of lines) to a running
// tsd over telnet, /api/put, Influx /write or remote_write and reports the
// client's view (points/s, request latency p50/p99, errors) and, with -pid,
// the server's CPU seconds and peak resident memory read from /proc/<pid>.
// It is a separate process from the server on purpose. -runs N repeats the
// run N times, each on the next span of the dataset so that no run rewrites
// another's points, and prints the median points/s and the median server CPU
// seconds per million points. -cpuprofile profiles the load generator itself.
//
// Usage:
//
//	tsdload -proto telnet -conns 4 -batch 1000 -pid $(pgrep -x tsd)
//	tsdload -proto remotewrite -batch 1000 -hosts 1000 -span 1h
//	tsdload -proto influx -file lines.txt
//	tsdload -proto telnet -limit 1000000 -runs 5 -pid $(pgrep -x tsd)
//
// See package bench/load for what one request is in each protocol.
package main
