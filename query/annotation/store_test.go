package annotation

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

const tsuidHex = "000001000001000001"

// newStore opens a pebble store in a temp dir with a data table and
// returns an annotation Store over it with the given salt.
func newStore(t *testing.T, sl salt.Salt) (*Store, storage.Table) {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	tbls, err := storage.EnsureTables(ctx, db, storage.TableSpec{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t", MaxVersions: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	tbl := tbls[0]
	l := rowkey.Layout{Widths: series.DefaultWidths(), Salt: sl, MaxTags: 8}
	s, err := NewStore(Options{Table: tbl, Layout: &l})
	if err != nil {
		t.Fatal(err)
	}
	return s, tbl
}

func mustSalt(t *testing.T, width, buckets int) salt.Salt {
	t.Helper()
	sl, err := salt.New(width, buckets)
	if err != nil {
		t.Fatal(err)
	}
	return sl
}

func tsuidBytes(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawCell reads one stored cell directly from the table.
func rawCell(t *testing.T, tbl storage.Table, rowHex, qualHex string) (string, bool) {
	t.Helper()
	cells, err := tbl.Get(context.Background(), tsuidBytes(t, rowHex),
		&storage.ReadOptions{Qualifiers: [][]byte{tsuidBytes(t, qualHex)}})
	if errors.Is(err, storage.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(cells[0].Value), true
}

func put(t *testing.T, s *Store, a Annotation, overwrite bool) Annotation {
	t.Helper()
	a.Given = a.Changed()
	got, err := s.Put(context.Background(), &a, overwrite)
	if err != nil {
		t.Fatalf("Put %v: %v", &a, err)
	}
	return got
}

// The worked example of docs/formats.md, Annotations: 1292148123 s in row
// 1292148000 is qualifier 01007B; unsalted key 000001 4D049D20 000001
// 000001; the cell holds OpenTSDB's storage JSON byte for byte.
func TestWorkedExampleBytes(t *testing.T) {
	s, tbl := newStore(t, salt.Salt{})
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1292148123, Description: "deploy"}, false)
	v, ok := rawCell(t, tbl, "0000014D049D20000001000001", "01007B")
	want := `{"tsuid":"000001000001000001","startTime":1292148123,"endTime":0,"description":"deploy","notes":"","custom":null}`
	if !ok || v != want {
		t.Fatalf("cell = %q %v, want %q", v, ok, want)
	}
	put(t, s, Annotation{StartTime: 1292148123, Description: "global", Custom: map[string]string{"b": "2", "a": "1"}}, false)
	v, ok = rawCell(t, tbl, "0000004D049D20", "01007B")
	want = `{"startTime":1292148123,"endTime":0,"description":"global","notes":"","custom":{"a":"1","b":"2"}}`
	if !ok || v != want {
		t.Fatalf("global cell = %q %v, want %q", v, ok, want)
	}
}

// A start in ms keeps the 5-byte form even on a whole second, so it is a
// different cell from the same instant in seconds.
func TestMillisecondQualifier(t *testing.T) {
	s, tbl := newStore(t, salt.Salt{})
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1292148123456, Description: "ms"}, false)
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1292148123000, Description: "ms whole"}, false)
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1292148123, Description: "s"}, false)
	for q, desc := range map[string]string{"010001E240": "ms", "010001E078": "ms whole", "01007B": "s"} {
		v, ok := rawCell(t, tbl, "0000014D049D20000001000001", q)
		if !ok || !strings.Contains(v, `"description":"`+desc+`"`) {
			t.Errorf("qualifier %s = %q %v, want description %q", q, v, ok, desc)
		}
	}
	got, err := s.Range(context.Background(), tsuidBytes(t, tsuidHex), 1292148123000, 1292148123999)
	if err != nil || len(got) != 3 {
		t.Fatalf("Range = %v %v, want 3 notes", got, err)
	}
}

// The global row keeps zero salt bytes; a series row is salted.
func TestSaltedKeys(t *testing.T) {
	s, tbl := newStore(t, mustSalt(t, 1, 20))
	put(t, s, Annotation{StartTime: 1356998400, Description: "g"}, false)
	if _, ok := rawCell(t, tbl, "0000000050E22700", "010000"); !ok {
		t.Fatal("global annotation not in the unsalted zero-metric row")
	}
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1356998400, Description: "x"}, false)
	// This series hashes to bucket 08 (docs/formats.md, Row keys).
	if _, ok := rawCell(t, tbl, "0800000150E22700000001000001", "010000"); !ok {
		t.Fatal("series annotation not in its salted row")
	}
}

func TestPutGetMerge(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, mustSalt(t, 1, 20))
	tsuid := tsuidBytes(t, tsuidHex)
	put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1388450562, EndTime: 1419984000,
		Description: "Hello!", Notes: "My Notes", Custom: map[string]string{"owner": "ops"}}, false)

	// POST with only a description keeps the other stored fields.
	got := put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1388450562, Description: "Boo"}, false)
	if got.Notes != "My Notes" || got.EndTime != 1419984000 || got.Custom["owner"] != "ops" || got.Description != "Boo" {
		t.Fatalf("merged = %+v", got)
	}
	stored, err := s.Get(ctx, tsuid, 1388450562)
	if err != nil || !sameNote(stored, got) {
		t.Fatalf("Get = %+v %v, want %+v", stored, err, got)
	}
	// PUT replaces every mutable field.
	got = put(t, s, Annotation{TSUID: tsuidHex, StartTime: 1388450562, Description: "Boo"}, true)
	if got.Notes != "" || got.EndTime != 0 || got.Custom != nil {
		t.Fatalf("overwritten = %+v", got)
	}
	if _, err := s.Put(ctx, &Annotation{TSUID: tsuidHex, StartTime: 1388450562}, false); !errors.Is(err, ErrNoChanges) {
		t.Fatalf("Put without changes: %v, want ErrNoChanges", err)
	}
	if _, err := s.Put(ctx, &Annotation{TSUID: tsuidHex, Description: "x", Given: FieldDescription}, false); !errors.Is(err, ErrNoStartTime) {
		t.Fatalf("Put without start: %v", err)
	}
	if _, err := s.Get(ctx, tsuid, 1388450563); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, nil, 1388450562); !errors.Is(err, ErrNotFound) {
		t.Fatalf("global Get found the series note: %v", err)
	}
	if err := s.Delete(ctx, tsuid, 1388450562); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, tsuid, 1388450562); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, tsuid, 1388450562); err != nil {
		t.Fatalf("Delete of a missing note: %v", err)
	}
}

func TestPutBadTSUID(t *testing.T) {
	s, _ := newStore(t, mustSalt(t, 1, 20))
	for _, ts := range []string{"0001", "00000100000", "zz0001000001000001", "000001000002000001000001000001"} {
		_, err := s.Put(context.Background(), &Annotation{TSUID: ts, StartTime: 1, Description: "x", Given: FieldDescription}, false)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("TSUID %q: %v, want ErrInvalid", ts, err)
		}
	}
}

func sameNote(a, b Annotation) bool {
	return string(AppendJSON(nil, &a)) == string(AppendJSON(nil, &b))
}

// Range over one series reads only its notes, by Gets for a short range
// and by a scan for a long one, with the same answer; data cells whose
// qualifier starts with 01 are not notes.
func TestRangeSeriesAndGlobal(t *testing.T) {
	ctx := context.Background()
	s, tbl := newStore(t, mustSalt(t, 1, 4))
	other := "000001000001000002"
	const base = 1356998400
	for h := range int64(100) {
		put(t, s, Annotation{TSUID: tsuidHex, StartTime: base + h*3600 + 17, Description: fmt.Sprint("n", h)}, false)
		put(t, s, Annotation{TSUID: other, StartTime: base + h*3600 + 17, Description: "other"}, false)
	}
	put(t, s, Annotation{StartTime: base + 5, Description: "g1"}, false)
	put(t, s, Annotation{StartTime: base + 7200, Description: "g2"}, false)
	// A point at delta 16 s has qualifier 0100: not a note.
	row, _ := s.l.AppendRowKeyFromTSUID(nil, tsuidBytes(t, tsuidHex), base*1000)
	if err := tbl.Put(ctx, row, []storage.Cell{{Family: "t", Qualifier: []byte{0x01, 0x00}, Value: []byte{1}}}); err != nil {
		t.Fatal(err)
	}
	tsuid := tsuidBytes(t, tsuidHex)
	short, err := s.Range(ctx, tsuid, base*1000, (base+10*3600)*1000)
	if err != nil || len(short) != 10 || short[0].Description != "n0" || short[9].Description != "n9" {
		t.Fatalf("short Range = %d notes %v", len(short), err)
	}
	long, err := s.Range(ctx, tsuid, base*1000+17000, (base+99*3600+17)*1000)
	if err != nil || len(long) != 100 {
		t.Fatalf("long Range = %d notes %v, want 100", len(long), err)
	}
	for i, a := range long {
		if a.TSUID != tsuidHex || a.Description != fmt.Sprint("n", i) {
			t.Fatalf("long[%d] = %+v", i, a)
		}
	}
	g, err := s.Range(ctx, nil, base*1000, (base+200*3600)*1000)
	if err != nil || len(g) != 2 || g[0].Description != "g1" || g[1].Description != "g2" {
		t.Fatalf("global Range = %+v %v", g, err)
	}
	if _, err := s.Range(ctx, nil, 10, 5); !errors.Is(err, ErrEndBeforeStart) {
		t.Fatalf("reversed range: %v", err)
	}
	if _, err := s.Range(ctx, nil, 0, 0); !errors.Is(err, ErrNoEndTime) {
		t.Fatalf("no end: %v", err)
	}
	if s.Corrupt() != 0 {
		t.Fatalf("Corrupt = %d", s.Corrupt())
	}
}

func TestDeleteRangeCounts(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, mustSalt(t, 1, 20))
	const base = 1356998400
	for i := range int64(5) {
		put(t, s, Annotation{TSUID: tsuidHex, StartTime: base + i*1800, Description: "x"}, false)
		put(t, s, Annotation{StartTime: base + i*1800, Description: "g"}, false)
	}
	tsuid := tsuidBytes(t, tsuidHex)
	// [base+1800, base+5400] s holds i = 1, 2, 3.
	n, err := s.DeleteRange(ctx, tsuid, (base+1800)*1000, (base+5400)*1000)
	if err != nil || n != 3 {
		t.Fatalf("DeleteRange = %d %v, want 3", n, err)
	}
	left, _ := s.Range(ctx, tsuid, 0, (base+10000)*1000)
	if len(left) != 2 || left[0].StartTime != base || left[1].StartTime != base+4*1800 {
		t.Fatalf("left = %+v", left)
	}
	n, err = s.DeleteRange(ctx, nil, 1, (base+10000)*1000)
	if err != nil || n != 5 {
		t.Fatalf("global DeleteRange = %d %v, want 5", n, err)
	}
	n, err = s.DeleteRange(ctx, nil, 1, (base+10000)*1000)
	if err != nil || n != 0 {
		t.Fatalf("second global DeleteRange = %d %v, want 0", n, err)
	}
	if left, _ := s.Range(ctx, tsuid, 0, (base+10000)*1000); len(left) != 2 {
		t.Fatalf("global delete touched series notes: %d left", len(left))
	}
}

// Cells as OpenTSDB's own tests write them decode, and a damaged cell is
// skipped and counted.
func TestReadOpenTSDBCells(t *testing.T) {
	ctx := context.Background()
	s, tbl := newStore(t, salt.Salt{})
	row := tsuidBytes(t, "00000152C20900000001000001")
	cells := []storage.Cell{
		{Family: "t", Qualifier: []byte{1, 0x0A, 0x02}, Value: []byte(`{"tsuid":"000001000001000001","startTime":1388450562,` +
			`"endTime":1419984000,"description":"Hello!","notes":"My Notes","custom":{"owner":"ops"}}`)},
		{Family: "t", Qualifier: []byte{1, 0x0A, 0x03}, Value: []byte(`{"tsuid":"000001000001000001","startTime":1388450563,` +
			`"endTime":1419984000,"description":"Note2","notes":"Nothing"}`)},
		{Family: "t", Qualifier: []byte{1, 0x0A, 0x04}, Value: []byte(`{not json`)},
		{Family: "t", Qualifier: []byte{0x50, 0x10}, Value: []byte{1}},
	}
	if err := tbl.Put(ctx, row, cells); err != nil {
		t.Fatal(err)
	}
	got, err := s.Range(ctx, tsuidBytes(t, tsuidHex), 1388450560000, 1388450570000)
	if err != nil || len(got) != 2 {
		t.Fatalf("Range = %+v %v", got, err)
	}
	want := `{"tsuid":"000001000001000001","description":"Hello!","notes":"My Notes","custom":{"owner":"ops"},` +
		`"startTime":1388450562,"endTime":1419984000}`
	if j := string(AppendJSON(nil, &got[0])); j != want {
		t.Fatalf("AppendJSON = %s\nwant %s", j, want)
	}
	if s.Corrupt() != 1 {
		t.Fatalf("Corrupt = %d, want 1", s.Corrupt())
	}
}
