package head

import (
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/storage"
)

var (
	// ErrBadSeriesKey marks a series key whose length does not match the
	// UID widths or whose tags are not sorted by tag key UID.
	ErrBadSeriesKey = errors.New("ingest: bad series key")
	// ErrUnknownRef marks a SeriesRef the head never handed out (or that was
	// handed out by an earlier process: refs do not survive a restart).
	ErrUnknownRef = errors.New("ingest: unknown series reference")
	// ErrOutOfBounds marks a point the head cannot hold: a timestamp
	// outside 0..MaxTimestamp or an unknown value kind.
	ErrOutOfBounds = errors.New("ingest: point out of bounds")
)

// ErrThrottled marks a commit refused because the head is over its memory
// limit and flushing cannot bring it down (*ThrottleError). Clients should
// retry later: HTTP answers 503 with Retry-After, telnet
// "put: Please throttle writes: ...".
var ErrThrottled = errors.New("please throttle writes")

// ThrottleError is the error of a commit refused for memory. Its text is
// the protocol's: "Please throttle writes: head memory 2.1 GiB over limit
// 2 GiB".
type ThrottleError struct {
	// Memory is the head's memory when the commit was refused; Limit is
	// HeadOptions.MaxMemory.
	Memory, Limit int64
}

// Error returns the text the protocols answer with.
func (e *ThrottleError) Error() string {
	return fmt.Sprintf("Please throttle writes: head memory %s over limit %s", formatBytes(e.Memory), formatBytes(e.Limit))
}

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottleError) Is(target error) bool { return target == ErrThrottled }

// IsRetryable reports whether a write error is the server's condition, not
// the data's, so that the client should send the same points again later
// (503 with Retry-After; never a 4xx): throttling, a log that cannot write
// (full disk, closed at shutdown) or a store that is unavailable.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrThrottled) || errors.Is(err, wal.ErrWrite) || errors.Is(err, wal.ErrClosed) ||
		errors.Is(err, storage.ErrRetryable) || errors.Is(err, storage.ErrClosed)
}

// formatBytes writes n in the largest binary unit it reaches, one decimal
// when not whole: 2 GiB, 2.1 GiB, 512 MiB.
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
