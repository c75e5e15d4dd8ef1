package rebuild

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
)

// BenchmarkRebuildIndex: rebuilding the index of an OpenTSDB-layout table
// of 1,000 series x 24 hour rows (one compacted column of 60 points each);
// bytes are the table's row keys and cells as written.
func BenchmarkRebuildIndex(b *testing.B) {
	ctx := context.Background()
	s := openTables(b)
	l := rowkey.Layout{Widths: series.DefaultWidths(), Salt: salt.Salt{}}
	l.EnsureDefaults()
	const h0 = int64(1_356_998_400_000)
	var written int64
	pts := make([]series.Point, 60)
	var muts []storage.Mutation
	for sid := range 1000 {
		tags := []rowkey.Tag{{Key: []byte{0, 0, 1}, Value: []byte{0, byte(sid >> 8), byte(sid)}}}
		for h := range int64(24) {
			for i := range pts {
				pts[i] = series.IntPoint(h0+h*3_600_000+int64(i)*60_000, int64(i))
			}
			row, _ := l.AppendRowKey(nil, []byte{0, 0, 1}, pts[0].T, tags)
			q, v, err := rowkey.AppendCompacted(nil, nil, rowkey.BaseTime(pts[0].T), pts)
			if err != nil {
				b.Fatal(err)
			}
			written += int64(len(row) + len(q) + len(v))
			muts = append(muts, storage.Mutation{Row: row, Cells: []storage.Cell{{Family: "t", Qualifier: q, Value: v}}})
		}
	}
	if err := s.data.Apply(ctx, muts); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(written)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		meta := s.meta
		if err := s.meta.DeleteRange(ctx, nil, nil); err != nil {
			b.Fatal(err)
		}
		ix, err := index.Open(ctx, meta, nil, &index.Options{RefreshInterval: -1, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := RebuildIndex(ctx, &RebuildOptions{Data: s.data, Layout: l, Index: ix, Logger: quiet})
		if err != nil || st.Rows != 24_000 || ix.Len() != 1000 {
			b.Fatalf("%+v %v, %d series", st, err, ix.Len())
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*24_000), "ns/row")
}
