package ingest

import (
	"errors"
	"sync/atomic"

	"github.com/tsd-db/tsd/storage"
)

// Gate is the daemon's read-only state. While it has a reason, every
// write path refuses or pauses: points are refused before they reach the
// log (HTTP 503 with Retry-After, telnet "put: Please throttle writes:
// read-only: ..."), so none is acknowledged; the flusher, compactor and
// retention job skip their rounds and retry at the next, their rows and
// queue entries kept; reads go on. A nil *Gate never refuses.
//
// The reasons, first one reported:
//
//   - the operator's read-only mode (SetMode);
//   - the store refusing writes (GateOptions.Store): the pebble store while
//     its disk is under tsd.storage.min_free_bytes or full.
//
// A store write that slips past the gate (a check just before the disk
// crossed the limit) is refused by the store itself with the same error
// class, storage.ErrReadOnly.
type Gate struct {
	store func() error
	mode  atomic.Pointer[error]
}

// GateOptions configure a Gate.
type GateOptions struct {
	// Store returns the store's refusal of writes (pebble's
	// DB.WriteErr), nil while it takes them; it is called on every check,
	// so it must be cheap. Default none (the Bigtable engine has no local
	// disk to watch).
	Store func() error
}

// NewGate returns a gate for opts.
func NewGate(opts GateOptions) *Gate {
	return &Gate{store: opts.Store}
}

// Err returns why writes are refused now, or nil. The error matches
// storage.ErrReadOnly (and storage.ErrRetryable) and its text names the
// reason: "read-only: disk: 12 MiB free in /data, under min_free_bytes
// 256 MiB".
func (g *Gate) Err() error {
	if g == nil {
		return nil
	}
	if m := g.mode.Load(); m != nil {
		return *m
	}
	if g.store != nil {
		return g.store()
	}
	return nil
}

// SetMode makes the daemon read-only for the operator's reason (such as
// "tsd.mode=ro"), or writable again when reason is empty; the store's
// reason applies either way.
func (g *Gate) SetMode(reason string) {
	if reason == "" {
		g.mode.Store(nil)
		return
	}
	err := storage.ReadOnly(errors.New(reason))
	g.mode.Store(&err)
}
