package rebuild

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/storage/storagetest"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

// otsdbRow writes one OpenTSDB row: a single-point column per point, or one
// compacted column when compact is set.
func otsdbRow(t *testing.T, tbl storage.Table, l *rowkey.Layout, key []byte, pts []series.Point, compact bool) {
	t.Helper()
	metric, tagBytes := key[:3], key[3:]
	var tags []rowkey.Tag
	for len(tagBytes) > 0 {
		tags = append(tags, rowkey.Tag{Key: tagBytes[:3], Value: tagBytes[3:6]})
		tagBytes = tagBytes[6:]
	}
	row, err := l.AppendRowKey(nil, metric, pts[0].T, tags)
	if err != nil {
		t.Fatal(err)
	}
	base := rowkey.BaseTime(pts[0].T)
	var cells []storage.Cell
	if compact {
		q, v, err := rowkey.AppendCompacted(nil, nil, base, pts)
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, storage.Cell{Family: "t", Qualifier: q, Value: v})
	} else {
		for _, p := range pts {
			q, err := rowkey.AppendQualifier(nil, rowkey.NewQualifier(p.T-base*1000, rowkey.ValueFlags(p)))
			if err != nil {
				t.Fatal(err)
			}
			cells = append(cells, storage.Cell{Family: "t", Qualifier: q, Value: rowkey.AppendValue(nil, p)})
		}
	}
	if err := tbl.Put(context.Background(), row, cells); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildIndex: an OpenTSDB-layout table (no salt) with three series,
// a global annotation row and a corrupt key is scanned in batches of two
// series; the index then answers Postings and spans for every series, and
// the spans survive a reopen.
func TestRebuildIndex(t *testing.T) {
	ctx := context.Background()
	s := openTables(t)
	l := rowkey.Layout{Widths: series.DefaultWidths(), Salt: salt.Salt{}}
	l.EnsureDefaults()
	const h = int64(1_356_998_400_000) // 2013-01-01 00:00 UTC, a whole hour
	const hour = int64(3_600_000)
	a := []byte{0, 0, 1, 0, 0, 1, 0, 0, 1}                   // m1 host=1
	b := []byte{0, 0, 1, 0, 0, 1, 0, 0, 2}                   // m1 host=2
	c := []byte{0, 0, 2, 0, 0, 1, 0, 0, 1, 0, 0, 3, 0, 0, 4} // m2 host=1 dc=4
	for i := int64(0); i < 5; i++ {
		otsdbRow(t, s.data, &l, a, []series.Point{series.IntPoint(h+i*hour+1000, i), series.IntPoint(h+i*hour+2000, i)}, i%2 == 0)
	}
	otsdbRow(t, s.data, &l, b, []series.Point{series.Float64Point(h+3*hour+500, 1.5)}, false)
	otsdbRow(t, s.data, &l, c, []series.Point{series.IntPoint(h+10*hour, 7)}, false)
	otsdbRow(t, s.data, &l, c, []series.Point{series.IntPoint(h+12*hour, 8)}, true)
	put := func(row []byte) {
		if err := s.data.Put(ctx, row, []storage.Cell{{Family: "t", Qualifier: []byte{1, 0, 0}, Value: []byte("{}")}}); err != nil {
			t.Fatal(err)
		}
	}
	put(l.AppendGlobalAnnotationRowKey(nil, h))                       // global annotations
	put([]byte{0, 0, 1, 0x50, 0xE2, 0x27, 0, 0, 0})                   // 2 bytes short of a tag pair
	put([]byte{0, 0, 1, 0x50, 0xE2, 0x27, 0, 0, 0, 5, 0, 0, 1, 0, 0}) // tags out of order

	ix, err := index.Open(ctx, s.meta, nil, &index.Options{RefreshInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st, err := RebuildIndex(ctx, &RebuildOptions{Data: s.data, Layout: l, Index: ix, Batch: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 11 || st.BadKeys != 2 || st.GlobalRows != 1 || st.Registrations < 3 {
		t.Fatalf("stats %+v: want 11 rows, 2 bad keys, 1 global row, >= 3 registrations", st)
	}
	want := map[string][2]int64{string(a): {h, h + 4*hour}, string(b): {h + 3*hour, h + 3*hour}, string(c): {h + 10*hour, h + 12*hour}}
	checkRebuilt(t, ix, want)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix2, err := index.Open(ctx, s.meta, nil, &index.Options{RefreshInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	checkRebuilt(t, ix2, want)
	// A second rebuild finds every series known and changes nothing, also
	// when each row arrives a cell at a time (as one larger than the scan's
	// byte bound does): it still handles each row once.
	st, err = RebuildIndex(ctx, &RebuildOptions{Data: storagetest.CutRows(s.data, 1), Layout: l, Index: ix2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 11 || st.BadKeys != 2 || st.GlobalRows != 1 {
		t.Fatalf("second rebuild, rows cut into cells: stats %+v: want 11 rows, 2 bad keys, 1 global row", st)
	}
	if n := ix2.Len(); n != 3 {
		t.Fatalf("after a second rebuild: %d series, want 3", n)
	}
	checkRebuilt(t, ix2, want)
}

// checkRebuilt checks the index holds exactly want (TSUID -> first and
// last row base, ms) and that Postings select by metric.
func checkRebuilt(t *testing.T, ix *index.Index, want map[string][2]int64) {
	t.Helper()
	got := map[string][2]int64{}
	for _, m := range []uid.ID{1, 2} {
		b, err := ix.Postings(context.Background(), m, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix.ForEach(b, func(s index.Series) bool {
			if s.TSUID[2] != byte(m) || !s.HasSpan {
				t.Errorf("metric %d: series %x (has span %v)", m, s.TSUID, s.HasSpan)
			}
			got[s.TSUID] = [2]int64{s.First * 1000, s.Last * 1000}
			return true
		})
	}
	if len(got) != len(want) {
		t.Fatalf("index holds %d series, want %d: %x", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("series %x: span %v, want %v", k, got[k], w)
		}
	}
}

// TestRebuildOptions: missing fields are refused before anything is read.
func TestRebuildOptions(t *testing.T) {
	if _, err := RebuildIndex(context.Background(), &RebuildOptions{}); err == nil {
		t.Fatal("no Data: want an error")
	}
}

// tables are the data and meta tables of an embedded engine on a
// temporary directory.
type tables struct{ data, meta storage.Table }

func openTables(t testing.TB) tables {
	t.Helper()
	db, err := tsdpebble.Open(t.TempDir(), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	table := func(spec storage.TableSpec) storage.Table {
		err := db.EnsureTable(ctx, spec)
		tbl, terr := db.Table(ctx, spec.Name)
		if err = errors.Join(err, terr); err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	return tables{data: table(schema.DataTableSpec(schema.DefaultDataTable)), meta: table(schema.MetaTableSpec(schema.DefaultMetaTable))}
}
