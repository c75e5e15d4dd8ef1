package flush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// rowFolder is the store side of compaction, apart from its queue: it
// reads a stored row's data columns, merges their points as readers do
// (rowkey.RowDecoder) and rewrites them as one column in the table's
// format, deleting exactly the cell versions it read, so that columns
// another writer adds meanwhile survive. The Compactor folds queued rows
// with it; rollups will read and decode stored rows the same way. Its
// buffers are reused from row to row; it is not safe for concurrent use.
type rowFolder struct {
	opts  *FlushOptions // table, family, format, writer id
	seq   *flushSeq
	log   *slog.Logger
	dec   rowkey.RowDecoder
	enc   rowkey.DenseEncoder
	pts   []series.Point
	data  []storage.Cell // the data cells read
	dels  []storage.Deletion
	arena []byte
}

// foldResult is what one fold did.
type foldResult struct {
	// compacted says the row was rewritten as one column: folded cells
	// replaced by points points.
	compacted      bool
	folded, points int64
	// identical and variant count the duplicate timestamps merged.
	identical, variant int64
	// bad counts the cells left untouched because they do not decode.
	bad int64
	// conflict says another writer changed the column meanwhile
	// (opentsdb): nothing was written and the row stays queued.
	conflict bool
}

// stats returns the result as the compactor counts it.
func (r foldResult) stats() CompactStats {
	st := CompactStats{BadCells: r.bad}
	if r.conflict {
		st.Conflicts = 1
	}
	if r.compacted {
		st.Compacted, st.Folded, st.Points = 1, r.folded, r.points
		st.Identical, st.Variant = r.identical, r.variant
	}
	return st
}

func (r *rowFolder) init(opts *FlushOptions, seq *flushSeq, log *slog.Logger) {
	r.opts, r.seq, r.log = opts, seq, log
}

// read reads the data columns of row key (single, compacted and dense;
// appends, annotations and histograms are left alone) and returns them,
// valid until the next read. A missing row has none.
func (r *rowFolder) read(ctx context.Context, key []byte) ([]storage.Cell, error) {
	fam := r.opts.Family
	cells, err := r.opts.Table.Get(ctx, key, &storage.ReadOptions{Families: []string{fam}})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("ingest: compact: read row %x: %w", key, err)
	}
	data := r.data[:0]
	for _, cell := range cells {
		switch rowkey.Classify(cell.Qualifier) {
		case rowkey.ColumnSingle, rowkey.ColumnCompacted, rowkey.ColumnDense:
			data = append(data, cell)
		}
	}
	r.data = data
	return data, nil
}

// fold writes the points of the data cells read last as one column and
// deletes exactly the cell versions read, in one atomic row mutation
// (dense) or a check-and-put and a delete (opentsdb, whose merged column
// may reuse a qualifier another writer also writes). Cells that do not
// decode are left as they are.
func (r *rowFolder) fold(ctx context.Context, key []byte, baseSec int64) (res foldResult, err error) {
	r.dec.Duplicates() // counted per fold
	pts, derr := r.dec.Decode(r.pts[:0], baseSec, r.data)
	r.pts = pts
	identical, variant := r.dec.Duplicates()
	bad := badQualifiers(derr)
	if len(bad) > 0 {
		res.bad = int64(len(bad))
		r.log.Warn("ingest: compact: leaving cells that do not decode", "row", fmt.Sprintf("%x", key), "err", derr)
	}
	if len(pts) == 0 {
		return res, nil
	}
	var maxTs int64
	r.dels = r.dels[:0]
	for _, cell := range r.data {
		if isBad(bad, cell.Qualifier) {
			continue
		}
		maxTs = max(maxTs, cell.Timestamp)
		r.dels = append(r.dels, storage.Deletion{
			Kind: storage.DeleteColumn, Family: r.opts.Family, Qualifier: cell.Qualifier,
			MinTime: cell.Timestamp, MaxTime: cell.Timestamp + 1000,
		})
	}
	done := true
	if c := r.opts.Changes; c != nil {
		// The folded row decodes to the same points, but its cells change:
		// a move (internal/changes).
		defer c.MarkMoved(baseSec*1000, baseSec*1000+rowkey.RowSpanMs-1)
	}
	if r.opts.Format == schema.FormatOpenTSDB {
		done, err = r.foldOpenTSDB(ctx, key, baseSec, maxTs)
	} else {
		err = r.foldDense(ctx, key, baseSec, maxTs)
	}
	res.conflict = err == nil && !done
	if err == nil && done {
		res.compacted, res.folded, res.points = true, int64(len(r.dels)), int64(len(pts))
		res.identical, res.variant = identical, variant
	}
	return res, err
}

// foldDense writes the merged points as dense columns (one per
// MaxDensePoints) with new flush numbers, in the same row mutation that
// deletes the cells read. The new cells carry the newest timestamp read,
// so they rank against later writes as the newest folded cell did.
func (r *rowFolder) foldDense(ctx context.Context, key []byte, baseSec, ts int64) error {
	var cells []storage.Cell
	a := r.arena[:0]
	for pts := r.pts; len(pts) > 0; {
		chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
		pts = pts[len(chunk):]
		seq, err := r.seq.take()
		if err != nil {
			return err
		}
		q0 := len(a)
		a = rowkey.AppendDenseQualifier(a, r.opts.WriterID, seq)
		v0 := len(a)
		if a, err = r.enc.Append(a, baseSec, chunk); err != nil {
			return fmt.Errorf("ingest: compact: row %x: %w", key, err)
		}
		cells = append(cells, storage.Cell{Family: r.opts.Family, Timestamp: ts, Qualifier: a[q0:v0:v0], Value: a[v0:]})
	}
	r.arena = a[:0]
	mut := []storage.Mutation{{Row: key, Deletes: r.dels, Cells: cells}}
	if err := r.opts.Table.Apply(ctx, mut); err != nil {
		return fmt.Errorf("ingest: compact: write row %x: %w", key, err)
	}
	return nil
}

// foldOpenTSDB writes the merged points as OpenTSDB's compacted column
// with a check-and-put expecting the version of that qualifier it read (or
// none), then deletes the other cells read; false when another writer
// changed that qualifier meanwhile. A crash between the two leaves
// duplicates of equal value, which readers merge.
func (r *rowFolder) foldOpenTSDB(ctx context.Context, key []byte, baseSec, ts int64) (bool, error) {
	q, v, err := rowkey.AppendCompacted(nil, nil, baseSec, r.pts)
	if err != nil {
		return false, fmt.Errorf("ingest: compact: row %x: %w", key, err)
	}
	var expected []byte
	for _, cell := range r.data { // newest version first: storage order
		if bytes.Equal(cell.Qualifier, q) {
			expected = cell.Value
			break
		}
	}
	cell := []storage.Cell{{Family: r.opts.Family, Qualifier: q, Timestamp: ts, Value: v}}
	err = r.opts.Table.CheckAndPut(ctx, key, r.opts.Family, q, expected, cell)
	if errors.Is(err, storage.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ingest: compact: write row %x: %w", key, err)
	}
	// The put replaced the version (q, ts) if the row had it: keep it.
	dels := r.dels[:0]
	for _, d := range r.dels {
		if !(bytes.Equal(d.Qualifier, q) && d.MinTime == ts) {
			dels = append(dels, d)
		}
	}
	r.dels = dels
	if err := r.opts.Table.Delete(ctx, key, dels...); err != nil {
		return false, fmt.Errorf("ingest: compact: delete folded cells of row %x: %w", key, err)
	}
	return true, nil
}

// badQualifiers lists the qualifiers of the *rowkey.CellError in err.
func badQualifiers(err error) [][]byte {
	if err == nil {
		return nil
	}
	var out [][]byte
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *rowkey.CellError
		if errors.As(e, &ce) {
			out = append(out, ce.Qualifier)
		}
	}
	return out
}

func isBad(bad [][]byte, q []byte) bool {
	for _, b := range bad {
		if bytes.Equal(b, q) {
			return true
		}
	}
	return false
}
