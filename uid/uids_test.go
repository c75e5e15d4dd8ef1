package uid

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

var ctx = context.Background()

// TestAssignLayout checks the exact cells of OpenTSDB's UID table after
// assignments: forward map, reverse map and 8-byte MAXID.
func TestAssignLayout(t *testing.T) {
	db := openDB(t)
	u := openUIDs(t, db, Options{})
	tbl := u.Table()
	if got := mustResolve(t, u, Metric, "sys.cpu.user"); got != 1 {
		t.Fatalf("first metric uid %d", got)
	}
	if got := mustResolve(t, u, Metric, "sys.cpu.nice"); got != 2 {
		t.Fatalf("second metric uid %d", got)
	}
	if got := mustResolve(t, u, TagK, "host"); got != 1 {
		t.Fatalf("first tagk uid %d (kinds count separately)", got)
	}
	hexEq(t, "forward", rawGet(t, tbl, []byte("sys.cpu.nice"), "id", "metrics"), []byte{0, 0, 2})
	hexEq(t, "reverse", rawGet(t, tbl, []byte{0, 0, 2}, "name", "metrics"), []byte("sys.cpu.nice"))
	hexEq(t, "tagk reverse", rawGet(t, tbl, []byte{0, 0, 1}, "name", "tagk"), []byte("host"))
	hexEq(t, "MAXID metrics", rawGet(t, tbl, []byte{0}, "id", "metrics"), be8(2))
	hexEq(t, "MAXID tagk", rawGet(t, tbl, []byte{0}, "id", "tagk"), be8(1))
	if v := rawGet(t, tbl, []byte{0}, "id", "tagv"); v != nil {
		t.Errorf("MAXID tagv written without an assignment: %x", v)
	}
	spec := tbl.Spec()
	for _, f := range []string{"id", "name"} {
		if fs, ok := spec.Family(f); !ok || fs.MaxVersions != 1 || fs.TTL != 0 {
			t.Errorf("family %s: %+v %v", f, fs, ok)
		}
	}
}

func TestLookupAndName(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	id := mustResolve(t, u, TagV, "web01")
	u.DropCaches()
	got, err := u.Lookup(ctx, TagV, []byte("web01"))
	if err != nil || got != id {
		t.Fatalf("Lookup after DropCaches = %d, %v", got, err)
	}
	u.DropCaches()
	name, err := u.Name(ctx, TagV, id)
	if err != nil || name != "web01" {
		t.Fatalf("Name = %q, %v", name, err)
	}
	_, err = u.Lookup(ctx, Metric, []byte("new.metric"))
	if !errors.Is(err, ErrNoSuchName) || err.Error() != "No such name for 'metrics': 'new.metric'" {
		t.Errorf("Lookup unknown: %v", err)
	}
	_, err = u.Name(ctx, Metric, 0x03BD)
	if !errors.Is(err, ErrNoSuchID) || err.Error() != "No such unique ID for 'metrics': [0, 3, -67]" {
		t.Errorf("Name unknown: %v", err)
	}
	if _, err := u.Lookup(ctx, Metric, nil); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Lookup empty: %v", err)
	}
	// "\x00" is the counter row's key: a name the table cannot hold has
	// no UID, whatever row its key would read.
	if _, err := u.Lookup(ctx, TagV, []byte{0}); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("Lookup of the counter row's key: %v", err)
	}
}

func TestAutoCreateOff(t *testing.T) {
	db := openDB(t)
	u := openUIDs(t, db, Options{NoAutoCreateMetrics: true})
	_, err := u.Resolve(ctx, Metric, []byte("new.metric"))
	if err == nil || err.Error() != "No such name for 'metrics': 'new.metric'" {
		t.Fatalf("Resolve with auto-create off: %v", err)
	}
	if id := mustResolve(t, u, TagK, "host"); id != 1 {
		t.Errorf("tagk still auto-created: %d", id)
	}
	id, err := u.Assign(ctx, Metric, []byte("new.metric"))
	if err != nil || id != 1 {
		t.Fatalf("explicit Assign = %d, %v", id, err)
	}
	if got := mustResolve(t, u, Metric, "new.metric"); got != id {
		t.Errorf("Resolve after Assign = %d", got)
	}
	u2 := openUIDs(t, db, Options{NoAutoCreateTagKs: true, NoAutoCreateTagVs: true})
	if _, err := u2.Resolve(ctx, TagV, []byte("v")); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("tagv auto-create off: %v", err)
	}
	if _, err := u2.Resolve(ctx, TagK, []byte("k")); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("tagk auto-create off: %v", err)
	}
}

func TestExhaustion(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{Widths: series.Widths{Metric: 1}})
	for i := 1; i <= 255; i++ {
		if id := mustResolve(t, u, Metric, "m"+string(rune('a'+i%26))+strings.Repeat("x", i)); id != ID(i) {
			t.Fatalf("uid %d, want %d", id, i)
		}
	}
	_, err := u.Resolve(ctx, Metric, []byte("one.too.many"))
	if !errors.Is(err, ErrExhausted) || err.Error() != "All Unique IDs for metrics on 1 bytes are already assigned!" {
		t.Fatalf("exhaustion: %v", err)
	}
	if id := mustResolve(t, u, TagK, "host"); id != 1 || u.Width(TagK) != 3 {
		t.Errorf("tagk at width %d got %d", u.Width(TagK), id)
	}
}

func TestLatin1Storage(t *testing.T) {
	db := openDB(t)
	u := openUIDs(t, db, Options{Format: schema.FormatOpenTSDB})
	id := mustResolve(t, u, TagV, "café")
	hexEq(t, "latin-1 forward row", rawGet(t, u.Table(), []byte{'c', 'a', 'f', 0xE9}, "id", "tagv"), []byte{0, 0, 1})
	hexEq(t, "latin-1 reverse value", rawGet(t, u.Table(), []byte{0, 0, 1}, "name", "tagv"), []byte{'c', 'a', 'f', 0xE9})
	u.DropCaches()
	if name, err := u.Name(ctx, TagV, id); err != nil || name != "café" {
		t.Errorf("Name = %q, %v", name, err)
	}
	if _, err := u.Resolve(ctx, TagV, []byte("北京")); !errors.Is(err, ErrNotLatin1) {
		t.Errorf("non-Latin-1 name in opentsdb format: %v", err)
	}
	d := openUIDs(t, openDB(t), Options{})
	mustResolve(t, d, TagV, "北京")
	hexEq(t, "utf-8 forward row", rawGet(t, d.Table(), []byte("北京"), "id", "tagv"), []byte{0, 0, 1})
}

func TestAssignRefusesBadNames(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	for _, bad := range []string{"a\x00b", "tab\there", "\xff"} {
		if _, err := u.Resolve(ctx, TagV, []byte(bad)); !errors.Is(err, ErrInvalidName) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := u.Resolve(ctx, TagV, []byte(strings.Repeat("x", storage.MaxRowKeySize+1))); !errors.Is(err, ErrInvalidName) {
		t.Errorf("oversized name: %v", err)
	}
	if id := mustResolve(t, u, TagV, "+Inf"); id != 1 {
		t.Errorf("+Inf got %d: names are stored losslessly", id)
	}
}

// TestResolvePoint: metric first, then tag keys in ascending order with
// each value right after its key.
func TestResolvePoint(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	tags := []Tag{{[]byte("host"), []byte("web01")}, {[]byte("dc"), []byte("lga")}, {[]byte("cpu"), []byte("0")}}
	got, err := u.ResolvePoint(ctx, []byte{0xEE}, []byte("sys.cpu.user"), tags)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xEE, 0, 0, 1, // metric
		0, 0, 1, 0, 0, 1, // cpu=0
		0, 0, 2, 0, 0, 2, // dc=lga
		0, 0, 3, 0, 0, 3} // host=web01
	hexEq(t, "ResolvePoint", got, want)
	if string(tags[0].Key) != "cpu" || string(tags[2].Key) != "host" {
		t.Errorf("tags not sorted in place: %s %s %s", tags[0].Key, tags[1].Key, tags[2].Key)
	}
	got, err = u.ResolvePoint(ctx, nil, []byte("m2"), nil)
	if err != nil || len(got) != 3 {
		t.Errorf("zero tags: %x %v", got, err)
	}
	_, err = u.ResolvePoint(ctx, nil, []byte("m"), []Tag{{[]byte("a"), []byte("1")}, {[]byte("a"), []byte("2")}})
	if !errors.Is(err, ErrDuplicateTag) || !strings.Contains(err.Error(), `duplicate tag key "a"`) {
		t.Errorf("duplicate key: %v", err)
	}
}

func TestWarmPathsDoNotAllocate(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	u := openUIDs(t, openDB(t), Options{})
	tags := []Tag{{[]byte("host"), []byte("web01")}, {[]byte("dc"), []byte("lga")}}
	buf, err := u.ResolvePoint(ctx, nil, []byte("sys.cpu.user"), tags)
	if err != nil {
		t.Fatal(err)
	}
	name := []byte("sys.cpu.user")
	for what, fn := range map[string]func(){
		"Lookup":       func() { _, _ = u.Lookup(ctx, Metric, name) },
		"Resolve":      func() { _, _ = u.Resolve(ctx, TagV, tags[1].Value) },
		"Name":         func() { _, _ = u.Name(ctx, TagK, 1) },
		"ResolvePoint": func() { buf, _ = u.ResolvePoint(ctx, buf[:0], name, tags) },
	} {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("warm %s: %v allocs", what, n)
		}
	}
}

func TestCacheStatsAndBounds(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{NameCacheSize: 16, IDCacheSize: 16})
	for i := 0; i < 40; i++ {
		mustResolve(t, u, TagV, "v"+strings.Repeat("x", i))
	}
	st := u.Stats()[TagV]
	if st.Names.Entries > 16 || st.IDs.Entries > 16 || st.Names.Evictions != 24 {
		t.Errorf("bounds: %+v", st)
	}
	if st.Assigned != 40 || st.Names.Misses != 40 {
		t.Errorf("counters: %+v", st)
	}
	mustResolve(t, u, TagV, "v"+strings.Repeat("x", 39)) // recent: a hit
	mustResolve(t, u, TagV, "v")                         // evicted: a miss served by storage
	st2 := u.Stats()[TagV]
	if st2.Names.Hits != st.Names.Hits+1 || st2.Names.Misses != st.Names.Misses+1 || st2.Assigned != 40 {
		t.Errorf("after lookups: %+v", st2)
	}
}

// TestConcurrentSameNameSharesOneAssignment: one process, many callers, one
// new name: exactly one increment, so no ID leaks.
func TestConcurrentSameNameSharesOneAssignment(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	var wg sync.WaitGroup
	ids := make([]ID, 32)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = mustResolve(t, u, Metric, "shared.metric")
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id != 1 {
			t.Fatalf("caller %d got %d", i, id)
		}
	}
	hexEq(t, "MAXID", rawGet(t, u.Table(), []byte{0}, "id", "metrics"), be8(1))
}

// TestReverseConflictRetries: a reverse map already sitting on the next ID
// (MAXID behind the table) is skipped with a new increment.
func TestReverseConflictRetries(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	rawPut(t, u.Table(), []byte{0, 0, 1}, "name", "metrics", []byte("squatter"))
	if id := mustResolve(t, u, Metric, "m"); id != 2 {
		t.Fatalf("got %d, want 2", id)
	}
	if st := u.Stats()[Metric]; st.ReverseConflicts != 1 {
		t.Errorf("reverse conflicts %d", st.ReverseConflicts)
	}
	hexEq(t, "squatter kept", rawGet(t, u.Table(), []byte{0, 0, 1}, "name", "metrics"), []byte("squatter"))
	// Three squatters in a row exhaust the three attempts.
	for i := byte(3); i <= 5; i++ {
		rawPut(t, u.Table(), []byte{0, 0, i}, "name", "metrics", []byte("squatter"))
	}
	if _, err := u.Resolve(ctx, Metric, []byte("n")); !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("after 3 conflicts: %v", err)
	}
}

// TestLostForwardRace: the forward CAS finds the name already mapped (as
// when another daemon wins); our ID leaks, its reverse map is removed and
// the winner's ID is returned.
func TestLostForwardRace(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	rawPut(t, u.Table(), []byte("foo"), "id", "metrics", []byte{0, 0, 7})
	rawPut(t, u.Table(), []byte{0, 0, 7}, "name", "metrics", []byte("foo"))
	id, err := u.assign(ctx, Metric, []byte("foo")) // as if the lookup had missed
	if err != nil || id != 7 {
		t.Fatalf("assign = %d, %v", id, err)
	}
	hexEq(t, "MAXID (leaked 1)", rawGet(t, u.Table(), []byte{0}, "id", "metrics"), be8(1))
	if v := rawGet(t, u.Table(), []byte{0, 0, 1}, "name", "metrics"); v != nil {
		t.Errorf("leaked id keeps reverse map %q", v)
	}
	if st := u.Stats()[Metric]; st.RacesLost != 1 || st.Assigned != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRetryableErrors(t *testing.T) {
	db := openDB(t)
	base := openUIDs(t, db, Options{})
	ft := &flakyTable{Table: base.Table()}
	u, err := New(ft, &Options{Logger: quiet, RetryBackoff: 1})
	if err != nil {
		t.Fatal(err)
	}
	ft.failIncr.Store(1)
	ft.failCAS.Store(1)
	// The failed increment used no ID; the failed reverse CAS leaked 1.
	if id := mustResolve(t, u, Metric, "m"); id != 2 {
		t.Errorf("after 2 transient failures: uid %d, want 2", id)
	}
	ft.failIncr.Store(3)
	_, err = u.Resolve(ctx, Metric, []byte("n"))
	if !storage.IsRetryable(err) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("3 failures: %v", err)
	}
	ft.failIncr.Store(0)
	if id := mustResolve(t, u, Metric, "n"); id != 3 {
		t.Errorf("after recovery: %d, want 3", id)
	}
}

func TestOpenChecksTable(t *testing.T) {
	db := openDB(t)
	if err := db.EnsureTable(ctx, storage.TableSpec{Name: "other", Families: []storage.FamilySpec{{Name: "t"}}}); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(tbl, nil); err == nil || !strings.Contains(err.Error(), `not a UID table`) {
		t.Errorf("New on a data table: %v", err)
	}
	if _, err := Open(ctx, db, &Options{Widths: series.Widths{Metric: 9}}); err == nil {
		t.Error("width 9 accepted")
	}
}
