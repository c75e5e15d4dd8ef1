// Package daemontest runs the real tsd binary for end-to-end tests: it
// builds cmd/tsd once per test process (cgo off, as shipped), starts it on
// an ephemeral 127.0.0.1 port, learns the bound address from the daemon's
// "listening on" log line, keeps its log for assertions, and stops it when
// the test ends. cmd/tsd's and grafana's tests share it.
//
// A package using it calls Cleanup from its TestMain after m.Run, which
// removes the built binary.
//
// It is a test helper: only _test.go files import it.
package daemontest
