package flush

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// TestRowFolder folds a stored row on its own, apart from the queue: a
// dense and a compacted column become one column in the table's format
// holding their points (the newer cell winning a shared timestamp),
// stamped with the newest folded cell's timestamp; a cell that does not
// decode and an annotation stay as they were. An opentsdb fold that meets
// another writer's version of its column writes and deletes nothing.
func TestRowFolder(t *testing.T) {
	ctx := context.Background()
	key := ingesttest.SeriesKey(1, 1, 1)
	older := []series.Point{series.IntPoint(t0, 1), series.IntPoint(t0+1000, 2)}
	newer := []series.Point{series.IntPoint(t0+1000, 20), series.IntPoint(t0+2000, 3)}
	want := []series.Point{older[0], newer[0], newer[1]}
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			row := rowKeyOf(t, key, t0)
			var enc rowkey.DenseEncoder
			dv, err := enc.Append(nil, t0/1000, older)
			if err != nil {
				t.Fatal(err)
			}
			cq, cv, err := rowkey.AppendCompacted(nil, nil, t0/1000, newer)
			if err != nil {
				t.Fatal(err)
			}
			bad := rowkey.AppendDenseQualifier(nil, 9, 9)
			note := []byte{1, 0, 0}
			if err := s.Tbl.Put(ctx, row, []storage.Cell{
				{Family: "t", Qualifier: rowkey.AppendDenseQualifier(nil, 9, 1), Value: dv, Timestamp: 100_000},
				{Family: "t", Qualifier: cq, Value: cv, Timestamp: 200_000},
				{Family: "t", Qualifier: bad, Value: []byte{0xff, 0xff, 0xff}, Timestamp: 300_000},
				{Family: "t", Qualifier: note, Value: []byte("{}"), Timestamp: 400_000},
			}); err != nil {
				t.Fatal(err)
			}
			if err := fs.MkdirAll("seq", 0o755); err != nil {
				t.Fatal(err)
			}
			seq, err := openFlushSeq(fs, "seq")
			if err != nil {
				t.Fatal(err)
			}
			table := &ingesttest.HookTable{Table: s.Tbl}
			opts := (&FlushOptions{Table: table, WriterID: 5, Format: format}).EnsureDefaults()
			var r rowFolder
			r.init(opts, seq, ingesttest.Quiet)
			if format == schema.FormatOpenTSDB { // another writer puts the merged column first
				mq, mv, _ := rowkey.AppendCompacted(nil, nil, t0/1000, want)
				table.SetHook(func(op string, _ []byte) {
					if op == "checkandput" {
						s.Tbl.Put(ctx, row, []storage.Cell{{Family: "t", Qualifier: mq, Value: append(mv[:0:0], mv...), Timestamp: 500_000}})
					}
				})
				data, err := r.read(ctx, row)
				if err != nil || len(data) != 3 {
					t.Fatalf("read %d data cells, %v", len(data), err)
				}
				res, err := r.fold(ctx, row, t0/1000)
				if st := res.stats(); err != nil || st.Conflicts != 1 || st.Compacted != 0 || st.BadCells != 1 {
					t.Fatalf("fold against another writer: %+v, %v", st, err)
				}
				if cells, _ := s.Tbl.Get(ctx, row, nil); len(cells) != 5 {
					t.Fatalf("after a conflict the row holds %d cells, want the 4 written and the other writer's", len(cells))
				}
				table.SetHook(nil)
				s.Tbl.Delete(ctx, row, storage.Deletion{Kind: storage.DeleteColumn, Family: "t", Qualifier: mq})
			}
			data, err := r.read(ctx, row)
			if err != nil || len(data) != 3 {
				t.Fatalf("read %d data cells, %v", len(data), err)
			}
			res, err := r.fold(ctx, row, t0/1000)
			if st := res.stats(); err != nil || st.Compacted != 1 || st.Folded != 2 || st.Points != 3 || st.BadCells != 1 || st.Conflicts != 0 {
				t.Fatalf("fold: %+v, %v", st, err)
			}
			cells, err := s.Tbl.Get(ctx, row, nil)
			if err != nil || len(cells) != 3 {
				t.Fatalf("the folded row holds %d cells (%v), want the column, the bad cell and the annotation", len(cells), err)
			}
			var folded []storage.Cell
			for _, c := range cells {
				switch {
				case bytes.Equal(c.Qualifier, bad), bytes.Equal(c.Qualifier, note):
				case c.Timestamp != 200_000:
					t.Fatalf("folded column %x stamped %d, want the newest folded cell's 200000", c.Qualifier, c.Timestamp)
				default:
					folded = append(folded, c)
				}
			}
			wantKind := rowkey.ColumnDense
			if format == schema.FormatOpenTSDB {
				wantKind = rowkey.ColumnCompacted
			}
			if len(folded) != 1 || rowkey.Classify(folded[0].Qualifier) != wantKind {
				t.Fatalf("folded into %d columns, want one %v", len(folded), wantKind)
			}
			var dec rowkey.RowDecoder
			if got, err := dec.Decode(nil, t0/1000, folded); err != nil || !slices.Equal(got, want) {
				t.Fatalf("folded column holds %v (%v), want %v", got, err, want)
			}
		})
	}
}
