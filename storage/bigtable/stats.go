package bigtable

import "sync/atomic"

// RPCStats are the Bigtable RPC attempts since Open (each retry is one)
// that failed. Their latency goes to Options.ObserveRequest.
type RPCStats struct {
	Errors int64
}

// rpcErrors counts failed RPC attempts.
type rpcErrors struct{ n atomic.Int64 }

// RPCStats returns the RPC counts so far; safe for concurrent use.
func (db *DB) RPCStats() RPCStats { return RPCStats{Errors: db.rpcs.n.Load()} }
