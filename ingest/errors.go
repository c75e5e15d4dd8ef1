package ingest

import "errors"

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
