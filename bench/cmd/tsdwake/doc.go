// Command tsdwake times one query of the query set against running
// servers in tsdvm's pattern, turns of a few runs after a pause, and
// prints each server's mean and median by the run's position in its
// turn, with the CPU the server's process used per run when its pid is
// given. It shows what a pause costs the first run after it: on a VM the
// first run of a turn pays for waking the server and the client, and
// tsdvm's means carry one such run per turn (bench/cmd/tsdvm/doc.go).
//
// Usage, with tsd, VictoriaMetrics and tsdvm's floor loaded and running:
//
//	go run ./bench/cmd/tsdwake -addrs 127.0.0.1:4242,127.0.0.1:8428 -pids $(pgrep -x tsd),$(pgrep victoria) -gap 50ms -per 5
package main
