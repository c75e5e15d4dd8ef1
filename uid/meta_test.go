package uid

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

func openMeta(t *testing.T, db storage.DB) (meta, uidTbl storage.Table) {
	t.Helper()
	for _, spec := range []storage.TableSpec{MetaTableSpec(DefaultMetaTable), TableSpec(DefaultTable)} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := db.Table(ctx, DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	uidTbl, err = db.Table(ctx, DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	return meta, uidTbl
}

func TestRecordNewStore(t *testing.T) {
	meta, uidTbl := openMeta(t, openDB(t))
	s, err := EnsureRecord(ctx, meta, uidTbl, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Given = AllSettings
	if s != want {
		t.Errorf("new store settings %+v, want %+v", s, want)
	}
	for q, v := range map[string]string{"version": "1", "format": "dense", "salt.width": "1", "salt.buckets": "20",
		"uid.width.metric": "3", "uid.width.tagk": "3", "uid.width.tagv": "3"} {
		if got := rawGet(t, meta, MetaRecordRow, "r", q); string(got) != v {
			t.Errorf("record %s = %q, want %q", q, got, v)
		}
	}
	// A restart with nothing given adopts the record; the same values given
	// explicitly pass.
	again, err := EnsureRecord(ctx, meta, uidTbl, Settings{Format: FormatDense, SaltWidth: 1, SaltBuckets: 20, Given: SettingFormat | SettingSaltWidth | SettingSaltBuckets})
	if err != nil || again != want {
		t.Errorf("restart: %+v %v", again, err)
	}
}

func TestRecordExplicitSettingsOnNewStore(t *testing.T) {
	meta, uidTbl := openMeta(t, openDB(t))
	in := Settings{SaltWidth: 0, Widths: series.Widths{Metric: 4, TagK: 3, TagV: 5}, Given: SettingSaltWidth | SettingWidthMetric | SettingWidthTagV}
	s, err := EnsureRecord(ctx, meta, uidTbl, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.SaltWidth != 0 || s.SaltBuckets != 20 || s.Widths != (series.Widths{Metric: 4, TagK: 3, TagV: 5}) || s.Format != FormatDense {
		t.Errorf("settings %+v", s)
	}
	rec, ok, err := ReadRecord(ctx, meta)
	if err != nil || !ok || rec != s {
		t.Errorf("ReadRecord = %+v %v %v", rec, ok, err)
	}
}

func TestRecordMismatch(t *testing.T) {
	meta, uidTbl := openMeta(t, openDB(t))
	if _, err := EnsureRecord(ctx, meta, uidTbl, Settings{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   Settings
		want string
	}{
		{Settings{SaltBuckets: 16, Given: SettingSaltBuckets},
			`tsd.storage.salt.buckets is 20 in the record of table "tsdb-meta" but 16 was configured; it cannot change once data exists`},
		{Settings{Format: FormatOpenTSDB, Given: SettingFormat},
			`tsd.storage.format is dense in the record of table "tsdb-meta" but opentsdb was configured; it cannot change once data exists`},
		{Settings{Widths: series.Widths{TagV: 4}, Given: SettingWidthTagV},
			`tsd.storage.uid.width.tagv is 3 in the record of table "tsdb-meta" but 4 was configured; it cannot change once data exists`},
	} {
		_, err := EnsureRecord(ctx, meta, uidTbl, tc.in)
		var se *SettingError
		if !errors.Is(err, ErrSettingMismatch) || !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestRecordOpenTSDBData(t *testing.T) {
	db := openDB(t)
	meta, uidTbl := openMeta(t, db)
	// An OpenTSDB daemon's table: a MAXID row and maps, no tsd record.
	rawPut(t, uidTbl, []byte{0}, "id", "metrics", be8(1))
	rawPut(t, uidTbl, []byte("sys.cpu"), "id", "metrics", []byte{0, 0, 1})
	for _, tc := range []struct {
		in   Settings
		want string
	}{
		{Settings{}, "missing: tsd.storage.format, tsd.storage.salt.width, tsd.storage.salt.buckets"},
		{Settings{Format: FormatOpenTSDB, Given: SettingFormat}, "missing: tsd.storage.salt.width, tsd.storage.salt.buckets"},
		{Settings{SaltWidth: 0, SaltBuckets: 20, Given: SettingFormat | SettingSaltWidth | SettingSaltBuckets}, "needs tsd.storage.format=opentsdb, not dense"},
	} {
		_, err := EnsureRecord(ctx, meta, uidTbl, tc.in)
		if !errors.Is(err, ErrUnrecordedOpenTSDB) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), `table "tsdb-uid" holds OpenTSDB data (a MAXID row) but "tsdb-meta" has no tsd record`) {
			t.Errorf("%+v: %v", tc.in, err)
		}
	}
	if _, ok, _ := ReadRecord(ctx, meta); ok {
		t.Fatal("a refused start wrote a record")
	}
	in := Settings{Format: FormatOpenTSDB, SaltWidth: 0, SaltBuckets: 20, Given: SettingFormat | SettingSaltWidth | SettingSaltBuckets}
	s, err := EnsureRecord(ctx, meta, uidTbl, in)
	if err != nil || s.Format != FormatOpenTSDB || s.SaltWidth != 0 || s.Widths != series.DefaultWidths() {
		t.Fatalf("explicit opentsdb settings: %+v %v", s, err)
	}
	// Recorded now: a plain restart works and reads them back.
	s2, err := EnsureRecord(ctx, meta, uidTbl, Settings{})
	if err != nil || s2 != s {
		t.Errorf("restart: %+v %v", s2, err)
	}
}

func TestRecordConcurrentStarts(t *testing.T) {
	db := openDB(t)
	meta, uidTbl := openMeta(t, db)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, buckets := range []int{20, 30} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = EnsureRecord(ctx, meta, uidTbl, Settings{SaltBuckets: buckets, Given: SettingSaltBuckets})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("exactly one daemon must win: %v / %v", errs[0], errs[1])
	}
	rec, _, _ := ReadRecord(ctx, meta)
	loser := errs[0]
	if loser == nil {
		loser = errs[1]
	}
	if !errors.Is(loser, ErrSettingMismatch) || !strings.Contains(loser.Error(), "tsd.storage.salt.buckets is "+rec.value(SettingSaltBuckets)) {
		t.Errorf("loser: %v (record %+v)", loser, rec)
	}
}

func TestRecordCorrupt(t *testing.T) {
	meta, uidTbl := openMeta(t, openDB(t))
	rawPut(t, meta, MetaRecordRow, "r", "version", []byte("1"))
	rawPut(t, meta, MetaRecordRow, "r", "format", []byte("dense"))
	_, err := EnsureRecord(ctx, meta, uidTbl, Settings{})
	if !errors.Is(err, storage.ErrCorruption) || !strings.Contains(err.Error(), "record has no tsd.storage.salt.width") {
		t.Errorf("partial record: %v", err)
	}
}

func TestMetaTableSpec(t *testing.T) {
	spec := MetaTableSpec("tsdb-meta")
	if err := storage.ValidateTableSpec(spec); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MetaFamilyRecord, MetaFamilyIndex, MetaFamilyCompaction} {
		if fs, ok := spec.Family(f); !ok || fs.MaxVersions != 1 || fs.TTL != 0 {
			t.Errorf("family %q: %+v %v", f, fs, ok)
		}
	}
}
