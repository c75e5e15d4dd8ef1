package wal

import (
	"fmt"
	"log/slog"
	"time"
)

// Default option values.
const (
	DefaultSegmentSize   = 128 << 20
	DefaultFsyncInterval = time.Second
	// MaxRecordSize bounds one record's payload; a larger length prefix is
	// damage, not an allocation request.
	MaxRecordSize  = 64 << 20
	minSegmentSize = 64 << 10
)

// Options configure a Log. The zero value is usable after EnsureDefaults.
type Options struct {
	// SegmentSize is the size after which the log starts a new segment
	// file. A record never spans two segments, so a segment may exceed it by
	// one batch. Default 128 MiB; minimum 64 KiB.
	SegmentSize int64
	// FsyncInterval is how often the log's own goroutine syncs written
	// records to stable storage; a synchronous Append syncs at once.
	// Negative disables the periodic sync. Default 1 s.
	FsyncInterval time.Duration
	// Logger receives one error line per damaged place replay skipped, a
	// warning for an interrupted write at the end of the log, and failed
	// syncs. Default slog.Default().
	Logger *slog.Logger
	// ObserveSync, if set, is given the duration of every segment sync
	// (fsync), failed ones included, by the goroutine that ran it and
	// before the writers waiting on it are woken: it must be quick and
	// must not call the log. The daemon feeds a latency histogram with it.
	// Default none.
	ObserveSync func(time.Duration)
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.FsyncInterval == 0 {
		o.FsyncInterval = DefaultFsyncInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports an option out of range.
func (o *Options) Validate() error {
	if o.SegmentSize < minSegmentSize {
		return fmt.Errorf("wal: segment size %d below the minimum %d", o.SegmentSize, minSegmentSize)
	}
	return nil
}
