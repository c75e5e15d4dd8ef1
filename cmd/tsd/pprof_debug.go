//go:build tsdpprof

package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof" // the profiling handlers, only in a tsdpprof build
	"os"
)

// A build with -tags tsdpprof serves net/http/pprof on $TSD_PPROF
// (host:port), apart from the API port, to profile the daemon under
// bench/cmd/tsdload (bench/README.md). The listener lives as long as the
// process: a debug build needs no other owner for it.
func init() {
	addr := os.Getenv("TSD_PPROF")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			fmt.Fprintf(os.Stderr, "tsd: pprof on %s: %v\n", addr, err)
		}
	}()
}
