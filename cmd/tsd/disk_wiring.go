package main

import (
	"context"
	"errors"
	"time"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// diskConfig holds the full-disk settings (keys in keys.go).
type diskConfig struct {
	minFree       int64 // tsd.storage.min_free_bytes; 0 or -1 off
	checkInterval time.Duration
}

// pebbleMinFree is MinFreeBytes for pebble.Options: the key's 0 and -1
// turn the check off, which pebble spells negative (its 0 is the default).
func (d diskConfig) pebbleMinFree() int64 {
	if d.minFree <= 0 {
		return -1
	}
	return d.minFree
}

// newGate is the daemon's read-only state over db: the pebble engine's
// refusal while its disk is under tsd.storage.min_free_bytes or full. The
// Bigtable engine has no local disk to watch (its write-ahead log's disk
// full is still refused, by the log itself), so its gate has no store
// reason.
func newGate(db storage.DB) *ingest.Gate {
	if p, ok := db.(*pebble.DB); ok {
		return ingest.NewGate(ingest.GateOptions{Store: p.WriteErr})
	}
	return ingest.NewGate(ingest.GateOptions{})
}

// gatedDeleter refuses a query's delete=true while the daemon is
// read-only, before it writes the head's delete record.
// It marks every delete in changes once it is done, head and store, so
// that no kept PromQL answer outlives the points it held.
type gatedDeleter struct {
	gate    *ingest.Gate
	next    opentsdb.Deleter
	changes *changes.Tracker
}

// DeleteRange implements opentsdb.Deleter.
func (d gatedDeleter) DeleteRange(ctx context.Context, tsuids []string, start, end int64) error {
	if err := d.gate.Err(); err != nil {
		return err
	}
	defer d.changes.MarkAll() // a failed delete may have removed some rows
	return d.next.DeleteRange(ctx, tsuids, start, end)
}

// diskStats lists the disk figures: the pebble engine's free space and
// refusals, and whether the daemon is read-only.
func (l *statList) diskStats(st *ingestStack) {
	ro := int64(0)
	if st.gate.Err() != nil {
		ro = 1
	}
	l.add("tsd.storage.read-only", "1 while the daemon refuses writes (free disk under tsd.storage.min_free_bytes, or full).", false, ro)
	p, ok := st.db.(*pebble.DB)
	if !ok {
		return
	}
	s := p.SpaceStats()
	l.add("tsd.storage.disk.free-bytes", "Free bytes on the data directory's file system at the latest check (-1 unknown).", false, s.FreeBytes)
	l.add("tsd.storage.disk.min-free-bytes", "tsd.storage.min_free_bytes: under it writes are refused.", false, s.MinFreeBytes)
	l.add("tsd.storage.disk.refused", "Store writes refused while read-only (points are counted by tsd.ingest.read-only).", true, s.Refused)
	l.add("tsd.storage.disk.full", "Full-disk errors (ENOSPC) the store met, each making it read-only.", true, s.DiskFull)
	l.add("tsd.storage.disk.reopens", "Times the store reopened pebble (read-only after a full disk, read-write once space was back).", true, s.Reopens)
}

// readOnlyLeft reports whether err only says the daemon is read-only: at
// shutdown what the store refused stays in the log and the queue for the
// next start.
func readOnlyLeft(err error) bool { return errors.Is(err, storage.ErrReadOnly) }
