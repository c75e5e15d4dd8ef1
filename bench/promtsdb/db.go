package promtsdb

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// DefaultCommitEvery is the number of samples per appender commit.
const DefaultCommitEvery = 1000

// Open opens a Prometheus tsdb in dir with default options (WAL on) and
// background compactions disabled.
func Open(dir string) (*tsdb.DB, error) {
	opts := tsdb.DefaultOptions()
	// A 24 h dataset must fit one head without the retention loop
	// deleting it: retention counts from the newest sample.
	opts.RetentionDuration = int64(365 * 24 * time.Hour / time.Millisecond)
	db, err := tsdb.Open(dir, slog.New(slog.DiscardHandler), nil, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("open prometheus tsdb %s: %w", dir, err)
	}
	db.DisableCompactions()
	return db, nil
}

// Append appends every sample of d to db in order, committing every
// commitEvery samples, and returns the time it took. It caches each series'
// reference from its first Append.
func Append(ctx context.Context, db *tsdb.DB, d *Data, commitEvery int) (time.Duration, error) {
	if commitEvery <= 0 {
		commitEvery = DefaultCommitEvery
	}
	refs := make([]storage.SeriesRef, len(d.Labels))
	n := len(d.Labels)
	start := time.Now()
	app := db.Appender(ctx)
	for i, v := range d.Values {
		s := i % n
		t := d.Start + int64(i/n)*d.Step
		ref, err := app.Append(refs[s], d.Labels[s], t, v)
		if err != nil {
			_ = app.Rollback()
			return 0, fmt.Errorf("prometheus append sample %d: %w", i, err)
		}
		refs[s] = ref
		if (i+1)%commitEvery == 0 {
			if err := app.Commit(); err != nil {
				return 0, fmt.Errorf("prometheus commit at sample %d: %w", i, err)
			}
			app = db.Appender(ctx)
		}
	}
	if err := app.Commit(); err != nil {
		return 0, fmt.Errorf("prometheus commit: %w", err)
	}
	return time.Since(start), nil
}

// WriteBlock compacts the whole head of db into one block and returns the
// block's directory.
func WriteBlock(db *tsdb.DB) (string, error) {
	h := db.Head()
	if err := db.CompactHead(tsdb.NewRangeHead(h, h.MinTime(), h.MaxTime())); err != nil {
		return "", fmt.Errorf("prometheus compact head: %w", err)
	}
	bs := db.Blocks()
	if len(bs) != 1 {
		return "", fmt.Errorf("prometheus compact head: %d blocks, want 1", len(bs))
	}
	return bs[0].Dir(), nil
}

// BlockSize is the on-disk size of one Prometheus block.
type BlockSize struct {
	// Chunks is the bytes of the chunks/ segment files.
	Chunks int64
	// Index is the bytes of the index file.
	Index int64
	// Other is meta.json and tombstones.
	Other int64
	// Samples is the sample count recorded in meta.json.
	Samples uint64
}

// Total returns every byte of the block.
func (s BlockSize) Total() int64 { return s.Chunks + s.Index + s.Other }

// MeasureBlock walks a block directory.
func MeasureBlock(db *tsdb.DB, dir string) (BlockSize, error) {
	var s BlockSize
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		switch rel, _ := filepath.Rel(dir, path); {
		case filepath.Dir(rel) == "chunks":
			s.Chunks += info.Size()
		case rel == "index":
			s.Index += info.Size()
		default:
			s.Other += info.Size()
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("measure prometheus block %s: %w", dir, err)
	}
	for _, b := range db.Blocks() {
		if b.Dir() == dir {
			s.Samples = b.Meta().Stats.NumSamples
		}
	}
	return s, nil
}
