package dirsize

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/bench/storebench"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

func checkSums(t *testing.T, r Report) {
	t.Helper()
	if r.Data+r.Index+r.WAL+r.Other != r.Total || r.Total == 0 || r.Files == 0 {
		t.Fatalf("classes do not add up: %+v", r)
	}
}

func TestPrometheus(t *testing.T) {
	d, err := promtsdb.Generate(gen.Config{Hosts: 2, Span: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := promtsdb.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := promtsdb.Append(context.Background(), db, d, 1000); err != nil {
		t.Fatal(err)
	}
	bdir, err := promtsdb.WriteBlock(db)
	if err != nil {
		t.Fatal(err)
	}
	want, err := promtsdb.MeasureBlock(db, bdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir string }{{bdir}, {dir}} {
		r, err := Prometheus(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, r)
		if r.Data != want.Chunks || r.Index != want.Index || r.Points != uint64(d.NumSamples()) {
			t.Fatalf("%s: report %+v, block %+v", tc.dir, r, want)
		}
	}
}

func TestPebble(t *testing.T) {
	dir := t.TempDir()
	raw, err := storebench.OpenRaw(dir)
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := storebench.Cells(gen.Config{Hosts: 2}, 5000)
	if _, err := storebench.PutRate(context.Background(), raw, cells, 1000, 1); err != nil {
		t.Fatal(err)
	}
	if err := raw.DB().Flush(); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r, err := Pebble(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, r)
	if r.Data == 0 || r.Index != 0 {
		t.Fatalf("pebble report %+v: want sstables as data, no index class", r)
	}
}

// TestTSD builds a tsd-shaped store through storage/pebble and rowkey: dense
// hour rows in "tsdb", UID mappings in "tsdb-uid".
func TestTSD(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	points := writeDenseRows(t, db, gen.Config{Hosts: 4, Span: 3 * time.Hour})
	writeUIDs(t, db, 4)
	r, err := TSD(ctx, db, dir, DefaultDataTables, uint64(points))
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, r)
	if r.Index <= 0 || r.Data <= r.Index || r.Points != uint64(points) {
		t.Fatalf("tsd report %+v", r)
	}
	// 0.3 B/pt of dense values plus keys: well under Prometheus's 1 B/pt.
	if pp := r.PerPoint(r.Data); pp <= 0.1 || pp > 1.5 {
		t.Fatalf("%.3f data bytes per point", pp)
	}
	var out bytes.Buffer
	if err := r.Write(&out); err != nil || !strings.Contains(out.String(), "| data+index |") {
		t.Fatalf("Write: %v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
}

func uid(n int) []byte { return []byte{byte(n >> 16), byte(n >> 8), byte(n)} }

// writeDenseRows writes one dense cell per series and hour; it returns the
// number of points.
func writeDenseRows(t *testing.T, db storage.DB, cfg gen.Config) int {
	ctx := context.Background()
	spec := schema.DataTableSpec(schema.DefaultDataTable)
	if err := db.EnsureTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, "tsdb")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := gen.New(cfg)
	rows := map[string][]series.Point{}
	bases := map[string]int64{}
	layout := rowkey.DefaultLayout()
	var p gen.Point
	n := 0
	for ; g.Next(&p); n++ {
		tags := []rowkey.Tag{{Key: uid(1), Value: uid(p.Host + 1)}, {Key: uid(2), Value: uid(100)}}
		k, err := layout.AppendRowKey(nil, uid(p.Metric+1), p.T, tags)
		if err != nil {
			t.Fatal(err)
		}
		rows[string(k)] = append(rows[string(k)], p.Series())
		bases[string(k)] = rowkey.BaseTime(p.T)
	}
	var enc rowkey.DenseEncoder
	var muts []storage.Mutation
	for k, pts := range rows {
		v, err := enc.Append(nil, bases[k], pts)
		if err != nil {
			t.Fatal(err)
		}
		q := rowkey.AppendDenseQualifier(nil, 1, 1)
		muts = append(muts, storage.Mutation{Row: []byte(k), Cells: []storage.Cell{{Family: "t", Qualifier: q, Timestamp: 1000, Value: v}}})
	}
	if err := tbl.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	return n
}

func writeUIDs(t *testing.T, db storage.DB, hosts int) {
	ctx := context.Background()
	spec := storage.TableSpec{Name: "tsdb-uid", Families: []storage.FamilySpec{{Name: "id"}, {Name: "name"}}}
	if err := db.EnsureTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tbl, _ := db.Table(ctx, "tsdb-uid")
	for h := 0; h < hosts; h++ {
		name := []byte("host_" + string(rune('0'+h)))
		if err := tbl.Put(ctx, name, []storage.Cell{{Family: "id", Qualifier: []byte("tagv"), Timestamp: 1000, Value: uid(h + 1)}}); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Put(ctx, uid(h+1), []storage.Cell{{Family: "name", Qualifier: []byte("tagv"), Timestamp: 1000, Value: name}}); err != nil {
			t.Fatal(err)
		}
	}
}
