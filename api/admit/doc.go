// Package admit bounds how many queries tsd runs at once, whatever the
// query language: one Limiter is shared by OpenTSDB's /api/query (and its
// exp and last forms, and /api/search) and the Prometheus API's query and
// query_range, so neither can starve the other of CPU and memory.
//
// # Slots and the queue
//
// A query takes one of Options.MaxConcurrent slots (Acquire) before it
// reads anything. When every slot is taken it waits in a FIFO queue of at
// most Options.MaxQueued queries; one more is refused at once with
// ErrOverloaded, which the HTTP layer answers 503 with Retry-After in the
// query language's own error form. A wait ends with the caller's context.
//
// # Answers written in parts
//
// A slot bounds the work being done, not the clients being served: an
// answer that is written in parts gives its slot back before each write
// to the client (Release) and takes one again (Resume) to make the next
// part. A client that stops reading thus holds no slot while its write
// waits, and the answer holds only the part being written and its query's
// paused state. Resume waits in the same FIFO queue but is never refused
// and never counts against MaxQueued: the answer's first bytes are
// already sent, so it can only be finished or cut.
//
// A Limiter is safe for concurrent use; its memory is one entry per
// waiting query.
package admit
