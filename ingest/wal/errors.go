package wal

import (
	"errors"
	"fmt"
)

var (
	// ErrWrite marks an append that failed because the log could not write
	// or sync its file. The records of that append are not acknowledged;
	// everything acknowledged before is intact, and later appends retry.
	ErrWrite = errors.New("wal: write failed")
	// ErrDiskFull is the ErrWrite caused by a full disk (errors.Is matches
	// both).
	ErrDiskFull = fmt.Errorf("%w: no space left on device", ErrWrite)
	// ErrClosed is returned by appends after Close.
	ErrClosed = errors.New("wal: closed")
	// ErrSegmentChanged tells an appender that the log moved to a new
	// segment since it read Segment: it must encode its records again for
	// the new segment (series records are per segment) and retry.
	ErrSegmentChanged = errors.New("wal: segment changed")
	// ErrCorruptRecord marks a record payload that does not decode.
	ErrCorruptRecord = errors.New("wal: corrupt record")
)
