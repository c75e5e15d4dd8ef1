//go:build !unix

package main

// openFileLimit returns 0: the descriptor limit is not known here, so
// only tsd.core.connections.limit bounds connections.
func openFileLimit() uint64 { return 0 }
