// Command tsdload streams the bench dataset (or a file of lines) to a running
// tsd over telnet, /api/put, Influx /write or remote_write and reports the
// client's view (points/s, request latency p50/p99, errors) and, with -pid,
// the server's CPU seconds and peak resident memory read from /proc/<pid>.
// It is a separate process from the server on purpose.
//
// Usage:
//
//	tsdload -proto telnet -conns 4 -batch 1000 -pid $(pgrep -x tsd)
//	tsdload -proto remotewrite -batch 1000 -hosts 1000 -span 1h
//	tsdload -proto influx -file lines.txt
//
// See package bench/load for what one request is in each protocol.
package main
