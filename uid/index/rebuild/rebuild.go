package rebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// DefaultRebuildBatch is RebuildOptions.Batch's default.
const DefaultRebuildBatch = 10_000

// progressRows is how often (in rows) a rebuild logs its progress.
const progressRows = 1 << 20

// RebuildOptions configure RebuildIndex. Zero fields take the documented
// defaults.
type RebuildOptions struct {
	// Data is the data table to read. Required.
	Data storage.Table
	// Family is the data column family. Default "t".
	Family string
	// Layout is the data table's key layout (its recorded widths and
	// salt). Required: an OpenTSDB table usually has salt width 0.
	Layout rowkey.Layout
	// Index receives the series. Required.
	Index *index.Index
	// Batch is how many distinct series are collected before they are
	// registered with one RegisterMany call; it bounds the memory of a
	// rebuild whatever the table's size. Default 10,000.
	Batch int
	// Logger receives one warning per row key that does not parse and a
	// progress line every 2^20 rows. Default slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills zero fields and returns o.
func (o *RebuildOptions) EnsureDefaults() *RebuildOptions {
	if o.Family == "" {
		o.Family = "t"
	}
	if o.Batch == 0 {
		o.Batch = DefaultRebuildBatch
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Layout.EnsureDefaults()
	return o
}

// Validate reports the first missing or invalid field.
func (o *RebuildOptions) Validate() error {
	switch {
	case o.Data == nil:
		return errors.New("rebuild: RebuildOptions.Data is required")
	case o.Index == nil:
		return errors.New("rebuild: RebuildOptions.Index is required")
	case o.Batch < 1:
		return fmt.Errorf("rebuild: Batch %d must be positive", o.Batch)
	}
	return o.Layout.Validate()
}

// RebuildStats count what RebuildIndex read and registered.
type RebuildStats struct {
	// Rows is the number of data rows read, bad ones included.
	Rows int64
	// Registrations counts series handed to the index, once per batch
	// they appeared in (a series whose rows span batches counts more than
	// once; the index keeps one id and the widest span).
	Registrations int64
	// BadKeys counts rows whose key did not parse; they were skipped.
	BadKeys int64
	// GlobalRows counts rows of OpenTSDB's global annotations (metric UID
	// zero), which belong to no series and are skipped.
	GlobalRows int64
}

// RebuildIndex scans every row of the data table, for example one OpenTSDB
// wrote, and registers each series it finds with the hours its rows cover:
// `tsd index rebuild`. It reads row keys only (cells are skipped), holds at
// most Batch series in memory, and logs and skips rows whose key does not
// parse, so one corrupt row does not stop a rebuild. Registering is
// idempotent: running it twice, or on a store whose index is complete,
// only widens spans that are too narrow.
func RebuildIndex(ctx context.Context, opts *RebuildOptions) (RebuildStats, error) {
	o := *opts
	if err := o.EnsureDefaults().Validate(); err != nil {
		return RebuildStats{}, err
	}
	rb := &rebuilder{opts: &o, batch: make(map[string]*index.Registration, o.Batch)}
	err := rb.scan(ctx)
	if err == nil {
		err = rb.flush(ctx)
	}
	return rb.stats, err
}

// rebuilder is one RebuildIndex run.
type rebuilder struct {
	opts  *RebuildOptions
	batch map[string]*index.Registration // by TSUID
	tsuid []byte
	stats RebuildStats
}

// scan walks the table's rows, handling each once.
func (rb *rebuilder) scan(ctx context.Context) error {
	sc := rb.opts.Data.Scan(ctx, &storage.ScanOptions{
		ReadOptions: storage.ReadOptions{Families: []string{rb.opts.Family}, MaxVersions: 1},
	})
	defer sc.Close()
	for more := false; sc.Next(); {
		row := sc.Row()
		if !more { // a new row, not the next batch of a Partial one
			if err := rb.row(ctx, row.Key); err != nil {
				return err
			}
		}
		more = row.Partial
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("rebuild: scan %s: %w", rb.opts.Data.Spec().Name, err)
	}
	return nil
}

// row adds one row's series and hour to the batch.
func (rb *rebuilder) row(ctx context.Context, row []byte) error {
	if rb.stats.Rows++; rb.stats.Rows%progressRows == 0 {
		rb.opts.Logger.Info("rebuild: progress", "rows", rb.stats.Rows, "registrations", rb.stats.Registrations,
			"bad_keys", rb.stats.BadKeys)
	}
	if rb.globalRow(row) {
		rb.stats.GlobalRows++
		return nil
	}
	k, err := rb.opts.Layout.ParseRowKey(row)
	if err == nil {
		err = checkSeriesKey(&k)
	}
	if err != nil {
		rb.stats.BadKeys++
		rb.opts.Logger.Warn("rebuild: skipped a row whose key does not parse", "row", fmt.Sprintf("%X", row), "err", err)
		return nil
	}
	rb.tsuid = k.AppendTSUID(rb.tsuid[:0])
	ms := k.BaseMs()
	if r := rb.batch[string(rb.tsuid)]; r != nil {
		r.FirstMs, r.LastMs = min(r.FirstMs, ms), max(r.LastMs, ms)
		return nil
	}
	rb.batch[string(rb.tsuid)] = &index.Registration{TSUID: bytes.Clone(rb.tsuid), FirstMs: ms, LastMs: ms}
	if len(rb.batch) >= rb.opts.Batch {
		return rb.flush(ctx)
	}
	return nil
}

// globalRow reports a row of OpenTSDB's global annotations: zero salt
// bytes, the all-zero metric, a base time and no tags. Its salt is not the
// hash of its key, so ParseRowKey would call it corrupt.
func (rb *rebuilder) globalRow(row []byte) bool {
	w, m := rb.opts.Layout.Salt.Width(), rb.opts.Layout.Widths.Metric
	return len(row) == w+m+rowkey.TimestampBytes && allZero(row[:w+m])
}

// checkSeriesKey refuses what the index would refuse as a TSUID: a zero
// metric UID or a zero tag key. ParseRowKey has checked the tag order.
func checkSeriesKey(k *rowkey.Key) error {
	if allZero(k.Metric) {
		return errors.New("metric UID 0")
	}
	for i := range k.NumTags() {
		if tk, _ := k.Tag(i); allZero(tk) {
			return fmt.Errorf("tag key %d has UID 0", i)
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// flush registers the batch and empties it.
func (rb *rebuilder) flush(ctx context.Context) error {
	if len(rb.batch) == 0 {
		return nil
	}
	regs := make([]index.Registration, 0, len(rb.batch))
	for _, r := range rb.batch {
		regs = append(regs, *r)
	}
	if err := rb.opts.Index.RegisterMany(ctx, regs); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	rb.stats.Registrations += int64(len(regs))
	clear(rb.batch)
	return nil
}
