package flush

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// RebuildCheckpointRow is the meta table row (family r, the settings
// record's) holding the checkpoints of rollup rebuilds, one column per
// job (RebuildOptions.JobID).
var RebuildCheckpointRow = []byte("\x00rollup_rebuild")

// DefaultRebuildCheckpointEvery is how often a rebuild records its
// checkpoint by default.
const DefaultRebuildCheckpointEvery = time.Second

// RebuildOptions configure RebuildRollups.
type RebuildOptions struct {
	// Table is the data table the raw rows are read from. Required.
	Table storage.Table
	// Meta is the meta table holding the checkpoint (RebuildCheckpointRow).
	// Default none: an interrupted rebuild starts over.
	Meta storage.Table
	// Family, Layout and Format are the data table's, as in FlushOptions
	// (same defaults).
	Family string
	Layout *rowkey.Layout
	Format schema.Format
	// Rollups are the intervals and their tables. Required.
	Rollups *RollupOptions
	// Metrics are the UIDs of the metrics to rebuild, in the order they
	// are rebuilt. Required (the caller lists every metric for "all").
	Metrics [][]byte
	// Start and End bound the hours rebuilt, in Unix seconds: every hour
	// holding a second in [Start, End]. Required, Start <= End.
	Start, End int64
	// BatchRows is the number of raw rows whose cells are written in one
	// batch. Default DefaultFlushBatchRows.
	BatchRows int
	// CheckpointEvery is how often the checkpoint is recorded, at the end
	// of an hour; 0 means DefaultRebuildCheckpointEvery, negative at every
	// hour.
	CheckpointEvery time.Duration
	// Progress, when set, is called after each finished step (one hour of
	// one metric in one salt bucket) with the steps done and their total.
	Progress func(done, total int64)
	// Logger receives warnings. Default slog.Default().
	Logger *slog.Logger
	// Flusher, set in a running daemon, is the flusher writing the same
	// store: the job writes through its rollup writer, whose lock and
	// cache of recent rows then cover the job's writes too (a second
	// writer would leave the flusher folding days from rows the job has
	// since rewritten, and would write packed rows beside it). Default
	// none: a writer of the job's own (offline, nothing else writes).
	Flusher *Flusher
}

// RebuildStats count what RebuildRollups did.
type RebuildStats struct {
	// Steps is how many steps (salt bucket × metric × hour) the job has,
	// Skipped how many a checkpoint said were done already.
	Steps, Skipped int64
	// Rows counts the raw rows read and rolled up.
	Rows int64
	// Rollup counts the rollup writes.
	Rollup RollupStats
}

// JobID names the rebuild the options describe in the checkpoint row: the
// range, the metrics and the intervals, so that a rerun of the same
// command finds its checkpoint and another command does not.
func (o *RebuildOptions) JobID() string {
	h := fnv.New64a()
	for _, m := range o.Metrics {
		h.Write(m)
		h.Write([]byte{0})
	}
	if o.Rollups != nil && o.Rollups.Config != nil {
		for _, iv := range o.Rollups.Config.Intervals {
			h.Write([]byte(iv.Name))
			h.Write([]byte{0})
		}
	}
	return fmt.Sprintf("%d-%d-%016x", o.Start, o.End, h.Sum64())
}

// rebuildPos is a step: salt bucket, metric index, hour (s).
type rebuildPos struct {
	bucket, metric int
	hour           int64
}

func (p rebuildPos) before(q rebuildPos) bool {
	if p.bucket != q.bucket {
		return p.bucket < q.bucket
	}
	if p.metric != q.metric {
		return p.metric < q.metric
	}
	return p.hour < q.hour
}

// RebuildRollups computes the rollup cells of the raw rows of Metrics in
// [Start, End] with the flusher's own code (rollup.go): each raw row is
// read and its hour's cells written whole, as the compactor does, and
// each longer interval's cell (a day) is folded from the stored cells of
// its span. A cell is a function of the raw points, so a rebuild is
// idempotent and safe beside a running writer. Steps go salt bucket by
// salt bucket, metric by metric, hour by hour; the last finished step is
// recorded in Meta so that a rerun after an interruption continues after
// it, and the checkpoint is removed once the job is done.
//
// A day only partly inside [Start, End] gets its cell folded from the
// hours stored for it, whether rebuilt now or not.
func RebuildRollups(ctx context.Context, o *RebuildOptions) (RebuildStats, error) {
	var st RebuildStats
	if o == nil || o.Table == nil || o.Rollups == nil || len(o.Metrics) == 0 {
		return st, errors.New("ingest: rebuild: table, rollups and metrics are required")
	}
	if o.Start > o.End || o.Start < 0 {
		return st, fmt.Errorf("ingest: rebuild: bad range [%d, %d]", o.Start, o.End)
	}
	fo := (&FlushOptions{Table: o.Table, Family: o.Family, Layout: o.Layout, Format: o.Format}).EnsureDefaults()
	if err := fo.Layout.Validate(); err != nil {
		return st, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	w, err := o.rollupWriter(fo, log)
	if err != nil {
		return st, err
	}
	r := &rebuilder{o: o, fo: fo, w: w, id: o.JobID(), batch: o.BatchRows}
	if r.batch <= 0 {
		r.batch = DefaultFlushBatchRows
	}
	r.every = o.CheckpointEvery
	if r.every == 0 {
		r.every = DefaultRebuildCheckpointEvery
	}
	return r.run(ctx)
}

// rollupWriter is the flusher's rollup writer when the job runs beside
// one, else a new one.
func (o *RebuildOptions) rollupWriter(fo *FlushOptions, log *slog.Logger) (*rollupWriter, error) {
	if o.Flusher != nil && o.Flusher.roll != nil {
		return o.Flusher.roll, nil
	}
	return newRollupWriter(fo, o.Rollups, log)
}

// rebuilder is one RebuildRollups job.
type rebuilder struct {
	o     *RebuildOptions
	fo    *FlushOptions
	w     *rollupWriter
	id    string
	batch int
	every time.Duration

	st        RebuildStats
	done      int64
	saved     time.Time
	jobs      []rollupJob
	firstHr   int64
	lastHr    int64
	perMetric int64
}

func (r *rebuilder) run(ctx context.Context) (RebuildStats, error) {
	o := r.o
	r.firstHr = o.Start - o.Start%rowkey.RowSpan
	r.lastHr = o.End - o.End%rowkey.RowSpan
	r.perMetric = (r.lastHr-r.firstHr)/rowkey.RowSpan + 1
	buckets := r.fo.Layout.Buckets()
	r.st.Steps = int64(buckets) * int64(len(o.Metrics)) * r.perMetric
	resume, has, err := r.loadCheckpoint(ctx)
	if err != nil {
		return r.st, err
	}
	r.saved = time.Now()
	for b := range buckets {
		for m := range o.Metrics {
			from := r.firstHr
			if has {
				switch {
				case (rebuildPos{b, m, r.lastHr}).before(resume) || (rebuildPos{b, m, r.lastHr}) == resume:
					r.skip(r.perMetric)
					continue
				case (rebuildPos{b, m, r.firstHr - 1}).before(resume):
					from = resume.hour + rowkey.RowSpan
					r.skip((from - r.firstHr) / rowkey.RowSpan)
				}
			}
			if err := r.metric(ctx, b, m, from); err != nil {
				return r.st, err
			}
		}
	}
	if o.Meta != nil {
		err := o.Meta.Delete(ctx, RebuildCheckpointRow, storage.Deletion{Kind: storage.DeleteColumn, Family: schema.MetaFamilyRecord, Qualifier: []byte(r.id)})
		if err != nil {
			return r.st, fmt.Errorf("ingest: rebuild: remove checkpoint: %w", err)
		}
	}
	r.st.Rollup = r.w.stats()
	return r.st, nil
}

// skip counts n steps a checkpoint said were done.
func (r *rebuilder) skip(n int64) {
	r.st.Skipped += n
	r.advance(n)
}

func (r *rebuilder) advance(n int64) {
	if n <= 0 {
		return
	}
	r.done += n
	if r.o.Progress != nil {
		r.o.Progress(r.done, r.st.Steps)
	}
}

// metric rebuilds the hours [from, lastHr] of metric m in bucket b: one
// scan, the cells written a batch at a time and at the end of each hour,
// where the checkpoint may be recorded.
func (r *rebuilder) metric(ctx context.Context, b, m int, from int64) error {
	if from > r.lastHr {
		return nil
	}
	metric := r.o.Metrics[m]
	start, stop := r.fo.Layout.BucketRange(b, metric, from*1000, r.lastHr*1000)
	sc := r.o.Table.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: storage.ReadOptions{Families: []string{r.fo.Family}}})
	defer sc.Close()
	cur := from // the hour being read
	var last []byte
	for sc.Next() {
		row := sc.Row()
		if string(row.Key) == string(last) {
			continue // the rest of a row cut by the scan's batch bound
		}
		k, err := r.fo.Layout.ParseRowKey(row.Key)
		if err != nil {
			r.w.log.Warn("ingest: rebuild: row key does not parse; skipped", "row", hex.EncodeToString(row.Key), "err", err)
			continue
		}
		if k.Base != cur {
			if err := r.endHours(ctx, b, m, cur, k.Base); err != nil {
				return err
			}
			cur = k.Base
		}
		last = append(last[:0], row.Key...)
		r.jobs = append(r.jobs, rollupJob{key: append([]byte(nil), row.Key...), baseSec: k.Base, read: true})
		r.st.Rows++
		if len(r.jobs) >= r.batch {
			if err := r.write(ctx); err != nil {
				return err
			}
		}
	}
	if err := sc.Close(); err != nil {
		return fmt.Errorf("ingest: rebuild: scan metric %x bucket %d: %w", metric, b, err)
	}
	return r.endHours(ctx, b, m, cur, r.lastHr+rowkey.RowSpan)
}

// endHours finishes the hours [cur, next): writes the pending cells,
// counts the steps and records the checkpoint when it is due.
func (r *rebuilder) endHours(ctx context.Context, b, m int, cur, next int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.write(ctx); err != nil {
		return err
	}
	r.advance((next - cur) / rowkey.RowSpan)
	if r.o.Meta == nil || (r.every > 0 && time.Since(r.saved) < r.every && next <= r.lastHr) {
		return nil
	}
	r.saved = time.Now()
	// Recorded even when ctx was cancelled meanwhile (by Progress, say):
	// the steps are done.
	return r.saveCheckpoint(context.WithoutCancel(ctx), rebuildPos{b, m, next - rowkey.RowSpan})
}

// write writes the cells of the pending rows, as the compactor does for
// the rows it read.
func (r *rebuilder) write(ctx context.Context) error {
	if len(r.jobs) == 0 {
		return nil
	}
	w := r.w
	w.mu.Lock()
	var st RollupStats
	err := w.writeJobs(ctx, r.jobs, time.Now().UnixMilli()*1000, &st) // cell timestamps in µs, whole ms
	w.total.add(st)
	w.mu.Unlock()
	r.jobs = r.jobs[:0]
	if err != nil {
		return fmt.Errorf("ingest: rebuild: %w", err)
	}
	return nil
}

// The checkpoint's value: "bucket metric-hex hour", the last finished
// step.
func (r *rebuilder) saveCheckpoint(ctx context.Context, p rebuildPos) error {
	v := fmt.Sprintf("%d %x %d", p.bucket, r.o.Metrics[p.metric], p.hour)
	err := r.o.Meta.Put(ctx, RebuildCheckpointRow, []storage.Cell{{Family: schema.MetaFamilyRecord, Qualifier: []byte(r.id), Value: []byte(v)}})
	if err != nil {
		return fmt.Errorf("ingest: rebuild: record checkpoint: %w", err)
	}
	return nil
}

func (r *rebuilder) loadCheckpoint(ctx context.Context) (rebuildPos, bool, error) {
	if r.o.Meta == nil {
		return rebuildPos{}, false, nil
	}
	cells, err := r.o.Meta.Get(ctx, RebuildCheckpointRow, &storage.ReadOptions{Families: []string{schema.MetaFamilyRecord}, Qualifiers: [][]byte{[]byte(r.id)}})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && len(cells) == 0) {
		return rebuildPos{}, false, nil
	}
	if err != nil {
		return rebuildPos{}, false, fmt.Errorf("ingest: rebuild: read checkpoint: %w", err)
	}
	f := strings.Fields(string(cells[0].Value))
	bad := fmt.Errorf("ingest: rebuild: checkpoint %q of job %s does not parse: %w", cells[0].Value, r.id, storage.ErrCorruption)
	if len(f) != 3 {
		return rebuildPos{}, false, bad
	}
	var p rebuildPos
	var err1, err2 error
	p.bucket, err1 = strconv.Atoi(f[0])
	p.hour, err2 = strconv.ParseInt(f[2], 10, 64)
	mid, err3 := hex.DecodeString(f[1])
	if err1 != nil || err2 != nil || err3 != nil {
		return rebuildPos{}, false, bad
	}
	p.metric = -1
	for i, m := range r.o.Metrics {
		if string(m) == string(mid) {
			p.metric = i
		}
	}
	if p.metric < 0 {
		return rebuildPos{}, false, bad
	}
	return p, true, nil
}
