package tsmeta

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var ctx = context.Background()

func openPebble(t *testing.T, dir string) (storage.DB, *Store) {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db, openStore(t, db)
}

func openStore(t *testing.T, db storage.DB) *Store {
	t.Helper()
	if err := db.EnsureTable(ctx, schema.MetaTableSpec(schema.DefaultMetaTable)); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func strp(s string) *string { return &s }

var tsuid = []byte{0, 0, 1, 0, 0, 1, 0, 0, 2}

// testStore runs the store's contract on one engine: defaults, POST
// merging, PUT resetting, 304 on no change, delete keeping counters, and
// tracking in both modes.
func testStore(t *testing.T, s *Store) {
	m, err := s.Get(ctx, tsuid)
	if err != nil || m.Stored || !math.IsNaN(m.Max) || m.TotalDatapoints != 0 || m.Custom != nil {
		t.Fatalf("fresh = %+v, %v", m, err)
	}
	// OpenTSDB's setters mark a field changed only when it differs from
	// its default (src/meta/TSMeta.java setDescription): "" is no change.
	if _, err := s.Update(ctx, tsuid, &Update{Description: strp("")}, false); err != ErrNoChange {
		t.Errorf("empty update: %v", err)
	}
	ret := 7
	m, err = s.Update(ctx, tsuid, &Update{Description: strp("cpu"), Retention: &ret, Custom: map[string]string{"o": "j"}, CustomSet: true}, false)
	if err != nil || m.Description != "cpu" || m.Retention != 7 || m.Custom["o"] != "j" || !m.Stored {
		t.Fatalf("post = %+v, %v", m, err)
	}
	mx := 100.5
	m, err = s.Update(ctx, tsuid, &Update{Units: strp("%"), Max: &mx}, false)
	if err != nil || m.Description != "cpu" || m.Units != "%" || m.Max != 100.5 || m.Custom["o"] != "j" {
		t.Fatalf("second post lost fields: %+v, %v", m, err)
	}
	m, err = s.Update(ctx, tsuid, &Update{Notes: strp("n")}, true)
	if err != nil || m.Description != "" || m.Units != "" || !math.IsNaN(m.Max) || m.Custom != nil || m.Notes != "n" || m.Retention != 0 {
		t.Fatalf("put did not reset: %+v, %v", m, err)
	}
	// Two rows of one series in a batch count together.
	tr := NewTracker(s, TrackCount, 1)
	if err := tr.Track(ctx, []Row{{TSUID: tsuid, Points: 2, LastWrite: 1_700_000_100_500}, {TSUID: tsuid, Points: 1, LastWrite: 1_700_000_050_000}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Track(ctx, []Row{{TSUID: tsuid, Points: 2, LastWrite: 1_700_000_100_000}}); err != nil {
		t.Fatal(err)
	}
	// An older batch of another daemon (writer 2) adds its own count and
	// neither lowers the arrival nor raises the creation.
	if err := NewTracker(s, TrackCount, 2).Track(ctx, []Row{{TSUID: tsuid, Points: 3, LastWrite: 1_700_000_000_000}}); err != nil {
		t.Fatal(err)
	}
	m, err = s.Get(ctx, tsuid)
	if err != nil || m.TotalDatapoints != 8 || m.LastReceived != 1_700_000_100 || m.Created != 1_700_000_000 || m.Notes != "n" {
		t.Fatalf("after tracking: %+v, %v", m, err)
	}
	if err := s.Delete(ctx, tsuid); err != nil {
		t.Fatal(err)
	}
	m, err = s.Get(ctx, tsuid)
	if err != nil || m.Stored || m.Notes != "" || m.TotalDatapoints != 8 {
		t.Fatalf("after delete: %+v, %v", m, err)
	}
	other := []byte{0, 0, 2}
	if err := NewTracker(s, TrackLast, 1).Track(ctx, []Row{{TSUID: other, Points: 9, LastWrite: 1_700_000_200_000}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Get(ctx, other); m.TotalDatapoints != 1 || m.LastReceived != 1_700_000_200 || m.Created != 0 {
		t.Errorf("tracking only: %+v", m)
	}
	if ok, err := s.Create(ctx, other, 0); !ok || err != nil {
		t.Errorf("create: %v %v", ok, err)
	}
	if ok, err := s.Create(ctx, other, 0); ok || err != nil {
		t.Errorf("second create: %v %v", ok, err)
	}
}

func TestStorePebble(t *testing.T) {
	dir := t.TempDir()
	db, s := openPebble(t, dir)
	testStore(t, s)
	db.Close()
	// Survives a restart.
	db, s = openPebble(t, dir)
	defer db.Close()
	if m, err := s.Get(ctx, tsuid); err != nil || m.TotalDatapoints != 8 || m.Created != 1_700_000_000 {
		t.Errorf("after reopen: %+v, %v", m, err)
	}
}

// TestStorageJSON: the ts_meta cell is OpenTSDB's storage JSON, field for
// field in TSMeta.getStorageJSON's order (src/meta/TSMeta.java), NaN
// quoted as Jackson writes it.
func TestStorageJSON(t *testing.T) {
	f := DefaultFields()
	f.Description, f.Custom = "d", map[string]string{"b": "2", "a": "1"}
	got := string(appendStorageJSON(nil, []byte{0, 0, 1, 0, 0, 1, 0, 0, 0x2a}, &f, 1350425579))
	want := `{"tsuid":"00000100000100002A","displayName":"","description":"d","notes":"","created":1350425579,` +
		`"custom":{"a":"1","b":"2"},"units":"","dataType":"","retention":0,"max":"NaN","min":"NaN"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back Fields
	created, err := decodeFields(&back, []byte(got))
	if err != nil || created != 1350425579 || back.Description != "d" || !math.IsNaN(back.Max) || back.Custom["b"] != "2" {
		t.Errorf("decode: %+v %d %v", back, created, err)
	}
}

func FuzzDecodeFields(f *testing.F) {
	d := DefaultFields()
	f.Add(appendStorageJSON(nil, tsuid, &d, 5))
	f.Add([]byte(`{"max":"Infinity","min":-1e308,"retention":"3"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fl Fields
		if _, err := decodeFields(&fl, b); err != nil {
			return
		}
		// What decodes re-encodes and decodes to the same fields.
		var again Fields
		enc := appendStorageJSON(nil, tsuid, &fl, 0)
		if _, err := decodeFields(&again, enc); err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		if again.Description != fl.Description || strings.Compare(again.Units, fl.Units) != 0 {
			t.Fatalf("round trip: %+v != %+v", again, fl)
		}
	})
}
