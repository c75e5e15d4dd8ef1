// The record's tests are an external package: they take the OpenTSDB probe
// from package uid, which imports schema.
package schema_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

var ctx = context.Background()

// openDB opens the real embedded engine on a temporary directory.
func openDB(t *testing.T) storage.DB {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openMeta creates the meta and UID tables and returns them, with the
// probe that finds OpenTSDB data in the UID table.
func openMeta(t *testing.T, db storage.DB) (meta storage.Table, probe schema.OpenTSDBProbe, uidTbl storage.Table) {
	t.Helper()
	for _, spec := range []storage.TableSpec{schema.MetaTableSpec(schema.DefaultMetaTable), uid.TableSpec(schema.DefaultUIDTable)} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	uidTbl, err = db.Table(ctx, schema.DefaultUIDTable)
	if err != nil {
		t.Fatal(err)
	}
	return meta, uid.MaxIDProbe(uidTbl), uidTbl
}

func rawGet(t *testing.T, tbl storage.Table, row []byte, fam, qual string) []byte {
	t.Helper()
	cells, err := tbl.Get(ctx, row, &storage.ReadOptions{Families: []string{fam}, Qualifiers: [][]byte{[]byte(qual)}})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cells[0].Value
}

func rawPut(t *testing.T, tbl storage.Table, row []byte, fam, qual string, val []byte) {
	t.Helper()
	if err := tbl.Put(ctx, row, []storage.Cell{{Family: fam, Qualifier: []byte(qual), Value: val}}); err != nil {
		t.Fatal(err)
	}
}

func be8(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func TestRecordNewStore(t *testing.T) {
	meta, probe, _ := openMeta(t, openDB(t))
	s, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	want := schema.DefaultSettings()
	want.Given = schema.AllSettings
	if s != want {
		t.Errorf("new store settings %+v, want %+v", s, want)
	}
	for q, v := range map[string]string{"version": "1", "format": "dense", "salt.width": "1", "salt.buckets": "20",
		"uid.width.metric": "3", "uid.width.tagk": "3", "uid.width.tagv": "3"} {
		if got := rawGet(t, meta, schema.MetaRecordRow, "r", q); string(got) != v {
			t.Errorf("record %s = %q, want %q", q, got, v)
		}
	}
	// A restart with nothing given adopts the record; the same values given
	// explicitly pass.
	again, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{Format: schema.FormatDense, SaltWidth: 1, SaltBuckets: 20, Given: schema.SettingFormat | schema.SettingSaltWidth | schema.SettingSaltBuckets})
	if err != nil || again != want {
		t.Errorf("restart: %+v %v", again, err)
	}
}

func TestRecordExplicitSettingsOnNewStore(t *testing.T) {
	meta, probe, _ := openMeta(t, openDB(t))
	in := schema.Settings{SaltWidth: 0, Widths: series.Widths{Metric: 4, TagK: 3, TagV: 5}, Given: schema.SettingSaltWidth | schema.SettingWidthMetric | schema.SettingWidthTagV}
	s, err := schema.EnsureRecord(ctx, meta, probe, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.SaltWidth != 0 || s.SaltBuckets != 20 || s.Widths != (series.Widths{Metric: 4, TagK: 3, TagV: 5}) || s.Format != schema.FormatDense {
		t.Errorf("settings %+v", s)
	}
	rec, ok, err := schema.ReadRecord(ctx, meta)
	if err != nil || !ok || rec != s {
		t.Errorf("ReadRecord = %+v %v %v", rec, ok, err)
	}
}

func TestRecordMismatch(t *testing.T) {
	meta, probe, _ := openMeta(t, openDB(t))
	if _, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   schema.Settings
		want string
	}{
		{schema.Settings{SaltBuckets: 16, Given: schema.SettingSaltBuckets},
			`tsd.storage.salt.buckets is 20 in the record of table "tsdb-meta" but 16 was configured; it cannot change once data exists`},
		{schema.Settings{Format: schema.FormatOpenTSDB, Given: schema.SettingFormat},
			`tsd.storage.format is dense in the record of table "tsdb-meta" but opentsdb was configured; it cannot change once data exists`},
		{schema.Settings{Widths: series.Widths{TagV: 4}, Given: schema.SettingWidthTagV},
			`tsd.storage.uid.width.tagv is 3 in the record of table "tsdb-meta" but 4 was configured; it cannot change once data exists`},
	} {
		_, err := schema.EnsureRecord(ctx, meta, probe, tc.in)
		var se *schema.SettingError
		if !errors.Is(err, schema.ErrSettingMismatch) || !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestRecordOpenTSDBData(t *testing.T) {
	db := openDB(t)
	meta, probe, uidTbl := openMeta(t, db)
	// An OpenTSDB daemon's table: a MAXID row and maps, no tsd record.
	rawPut(t, uidTbl, []byte{0}, "id", "metrics", be8(1))
	rawPut(t, uidTbl, []byte("sys.cpu"), "id", "metrics", []byte{0, 0, 1})
	for _, tc := range []struct {
		in   schema.Settings
		want string
	}{
		{schema.Settings{}, "missing: tsd.storage.format, tsd.storage.salt.width, tsd.storage.salt.buckets"},
		{schema.Settings{Format: schema.FormatOpenTSDB, Given: schema.SettingFormat}, "missing: tsd.storage.salt.width, tsd.storage.salt.buckets"},
		{schema.Settings{SaltWidth: 0, SaltBuckets: 20, Given: schema.SettingFormat | schema.SettingSaltWidth | schema.SettingSaltBuckets}, "needs tsd.storage.format=opentsdb, not dense"},
	} {
		_, err := schema.EnsureRecord(ctx, meta, probe, tc.in)
		if !errors.Is(err, schema.ErrUnrecordedOpenTSDB) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), `table "tsdb-uid" holds OpenTSDB data (a MAXID row) but "tsdb-meta" has no tsd record`) {
			t.Errorf("%+v: %v", tc.in, err)
		}
	}
	if _, ok, _ := schema.ReadRecord(ctx, meta); ok {
		t.Fatal("a refused start wrote a record")
	}
	in := schema.Settings{Format: schema.FormatOpenTSDB, SaltWidth: 0, SaltBuckets: 20, Given: schema.SettingFormat | schema.SettingSaltWidth | schema.SettingSaltBuckets}
	s, err := schema.EnsureRecord(ctx, meta, probe, in)
	if err != nil || s.Format != schema.FormatOpenTSDB || s.SaltWidth != 0 || s.Widths != series.DefaultWidths() {
		t.Fatalf("explicit opentsdb settings: %+v %v", s, err)
	}
	// Recorded now: a plain restart works and reads them back.
	s2, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{})
	if err != nil || s2 != s {
		t.Errorf("restart: %+v %v", s2, err)
	}
}

func TestRecordConcurrentStarts(t *testing.T) {
	db := openDB(t)
	meta, probe, _ := openMeta(t, db)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, buckets := range []int{20, 30} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = schema.EnsureRecord(ctx, meta, probe, schema.Settings{SaltBuckets: buckets, Given: schema.SettingSaltBuckets})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("exactly one daemon must win: %v / %v", errs[0], errs[1])
	}
	rec, _, _ := schema.ReadRecord(ctx, meta)
	loser := errs[0]
	if loser == nil {
		loser = errs[1]
	}
	if !errors.Is(loser, schema.ErrSettingMismatch) || !strings.Contains(loser.Error(), "tsd.storage.salt.buckets is "+strconv.Itoa(rec.SaltBuckets)) {
		t.Errorf("loser: %v (record %+v)", loser, rec)
	}
}

func TestRecordCorrupt(t *testing.T) {
	meta, probe, _ := openMeta(t, openDB(t))
	rawPut(t, meta, schema.MetaRecordRow, "r", "version", []byte("1"))
	rawPut(t, meta, schema.MetaRecordRow, "r", "format", []byte("dense"))
	_, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{})
	if !errors.Is(err, storage.ErrCorruption) || !strings.Contains(err.Error(), "record has no tsd.storage.salt.width") {
		t.Errorf("partial record: %v", err)
	}
}

// TestRecordBytes pins the record's cells, as stores written before schema
// existed hold them: a record put cell by cell reads back, cells the
// reader does not know are ignored, and a written record has exactly the
// seven cells.
func TestRecordBytes(t *testing.T) {
	meta, probe, _ := openMeta(t, openDB(t))
	cells := map[string]string{"version": "1", "format": "opentsdb", "salt.width": "0", "salt.buckets": "16",
		"uid.width.metric": "4", "uid.width.tagk": "2", "uid.width.tagv": "5", "rollup.later": "ignored"}
	for q, v := range cells {
		rawPut(t, meta, []byte("\x00record"), "r", q, []byte(v))
	}
	want := schema.Settings{Format: schema.FormatOpenTSDB, SaltWidth: 0, SaltBuckets: 16,
		Widths: series.Widths{Metric: 4, TagK: 2, TagV: 5}, Given: schema.AllSettings}
	if got, ok, err := schema.ReadRecord(ctx, meta); err != nil || !ok || got != want {
		t.Fatalf("ReadRecord = %+v %v %v, want %+v", got, ok, err, want)
	}
	if got, err := schema.EnsureRecord(ctx, meta, probe, schema.Settings{}); err != nil || got != want {
		t.Fatalf("EnsureRecord on the old record = %+v %v", got, err)
	}

	fresh, _, _ := openMeta(t, openDB(t))
	want.Given = 0
	if err := schema.WriteRecord(ctx, fresh, want); err != nil {
		t.Fatal(err)
	}
	got, err := fresh.Get(ctx, []byte("\x00record"), &storage.ReadOptions{Families: []string{"r"}})
	if err != nil {
		t.Fatal(err)
	}
	delete(cells, "rollup.later")
	if len(got) != len(cells) {
		t.Errorf("written record has %d cells, want %d", len(got), len(cells))
	}
	for _, c := range got {
		if v, ok := cells[string(c.Qualifier)]; !ok || v != string(c.Value) {
			t.Errorf("written cell %s = %q, want %q", c.Qualifier, c.Value, v)
		}
	}
	if err := schema.WriteRecord(ctx, fresh, want); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("second WriteRecord: %v, want a conflict", err)
	}
}

func TestMaxIDProbe(t *testing.T) {
	if uid.MaxIDProbe(nil) != nil {
		t.Error("a nil table has a probe")
	}
	_, probe, uidTbl := openMeta(t, openDB(t))
	if name, found, err := probe(ctx); err != nil || found || name != schema.DefaultUIDTable {
		t.Errorf("empty UID table: %q %v %v", name, found, err)
	}
	rawPut(t, uidTbl, []byte{0}, "id", "tagk", be8(3))
	if name, found, err := probe(ctx); err != nil || !found || name != schema.DefaultUIDTable {
		t.Errorf("UID table with a MAXID row: %q %v %v", name, found, err)
	}
}
