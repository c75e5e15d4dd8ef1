package uid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// tableCells returns every cell of tbl as "row/family/qualifier=value"
// lines, timestamps left out.
func tableCells(t *testing.T, tbl storage.Table) []string {
	t.Helper()
	var out []string
	sc := tbl.Scan(ctx, &storage.ScanOptions{})
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			out = append(out, fmt.Sprintf("%x/%s/%s=%x", c.Row, c.Family, c.Qualifier, c.Value))
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func byteNames(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

// TestResolveBatchBytes: a batch writes exactly the cells Resolve writes
// name by name (forward map, reverse map, MAXID), in both formats.
func TestResolveBatchBytes(t *testing.T) {
	for _, f := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		names := byteNames("sys.cpu.user", "host", "web01", "caf\u00e9", "z")
		serial := openUIDs(t, openMemDB(t), Options{Format: f})
		for _, n := range names {
			mustResolve(t, serial, TagV, string(n))
		}
		batch := openUIDs(t, openMemDB(t), Options{Format: f})
		ids := make([]ID, len(names))
		if err := batch.ResolveBatch(ctx, TagV, names, ids); err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			if ids[i] != ID(i+1) {
				t.Fatalf("%v: ids %v, want 1..%d in order", f, ids, len(ids))
			}
		}
		want, got := tableCells(t, serial.Table()), tableCells(t, batch.Table())
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("%v: batch wrote\n%v\nserial wrote\n%v", f, got, want)
		}
		if st := batch.Stats()[TagV]; st.Assigned != uint64(len(names)) {
			t.Errorf("%v: assigned %d", f, st.Assigned)
		}
	}
}

// TestResolveBatchMixed: cached, stored and new names with repeats; a
// second UIDs (another daemon, cold cache) resolves the same ids without
// assigning.
func TestResolveBatchMixed(t *testing.T) {
	db := openMemDB(t)
	u := openUIDs(t, db, Options{})
	a := mustResolve(t, u, Metric, "a")
	other := openUIDs(t, db, Options{})
	b := mustResolve(t, other, Metric, "b") // stored, not in u's cache
	names := byteNames("new1", "a", "b", "new1", "new2", "a")
	ids := make([]ID, len(names))
	if err := u.ResolveBatch(ctx, Metric, names, ids); err != nil {
		t.Fatal(err)
	}
	want := []ID{3, a, b, 3, 4, a}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	cold := openUIDs(t, db, Options{})
	ids2 := make([]ID, len(names))
	if err := cold.ResolveBatch(ctx, Metric, names, ids2); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids2) != fmt.Sprint(want) || cold.Stats()[Metric].Assigned != 0 {
		t.Fatalf("cold daemon: ids %v, assigned %d", ids2, cold.Stats()[Metric].Assigned)
	}
	if got := decodeCounter(rawGet(t, u.Table(), MaxIDRow, FamilyID, "metrics")); got != 4 {
		t.Errorf("MAXID %d, want 4", got)
	}
}

// TestResolveBatchErrors: auto-create off, invalid names, Latin-1, bad
// arguments.
func TestResolveBatchErrors(t *testing.T) {
	db := openMemDB(t)
	u := openUIDs(t, db, Options{NoAutoCreateTagVs: true, Format: schema.FormatOpenTSDB})
	ids := make([]ID, 2)
	if err := u.ResolveBatch(ctx, TagV, byteNames("x", "y"), ids); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("auto-create off: %v", err)
	}
	if err := u.AssignBatch(ctx, TagV, byteNames("x", "y"), ids); err != nil || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("AssignBatch: %v %v", ids, err)
	}
	if err := u.ResolveBatch(ctx, TagV, byteNames("x", "y"), ids); err != nil || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("after AssignBatch: %v %v", ids, err)
	}
	var ne *NameError
	if err := u.ResolveBatch(ctx, Metric, byteNames("ok", "bad\x01"), ids); !errors.As(err, &ne) {
		t.Errorf("invalid name: %v", err)
	}
	if err := u.CheckName(Metric, []byte("bad\x01")); !errors.As(err, &ne) {
		t.Errorf("CheckName invalid: %v", err)
	}
	if err := u.ResolveBatch(ctx, Metric, byteNames("\u4e16"), ids); !errors.Is(err, ErrNotLatin1) {
		t.Errorf("not Latin-1: %v", err)
	}
	if err := u.CheckName(Metric, bytes.Repeat([]byte("a"), storage.MaxRowKeySize+1)); !errors.Is(err, ErrInvalidName) {
		t.Errorf("long name: %v", err)
	}
	if err := u.ResolveBatch(ctx, Metric, byteNames("a", "b", "c"), ids); err == nil {
		t.Error("3 names, 2 ids: no error")
	}
	if got := rawGet(t, u.Table(), MaxIDRow, FamilyID, "metrics"); got != nil {
		t.Errorf("refused batches touched MAXID: %x", got)
	}
}

// TestResolveBatchMaxIDBehind: IDs the counter hands out that already have
// a reverse map (MAXID behind the table) are skipped, never overwritten.
func TestResolveBatchMaxIDBehind(t *testing.T) {
	u := openUIDs(t, openMemDB(t), Options{})
	rawPut(t, u.Table(), []byte{0, 0, 2}, FamilyName, "tagk", []byte("squatter"))
	ids := make([]ID, 3)
	if err := u.ResolveBatch(ctx, TagK, byteNames("a", "b", "c"), ids); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[1 3 4]" {
		t.Errorf("ids %v, want [1 3 4]", ids)
	}
	if got := rawGet(t, u.Table(), []byte{0, 0, 2}, FamilyName, "tagk"); string(got) != "squatter" {
		t.Errorf("reverse map of uid 2 is %q", got)
	}
	if u.Stats()[TagK].ReverseConflicts != 1 {
		t.Errorf("reverse conflicts %d", u.Stats()[TagK].ReverseConflicts)
	}
}

// TestResolveBatchFlaky: retryable failures of the increment and of
// forward check-and-puts (some of which may have landed) are retried and
// leave a consistent table.
func TestResolveBatchFlaky(t *testing.T) {
	base := openUIDs(t, openMemDB(t), Options{})
	ft := &flakyTable{Table: base.Table()}
	u, err := New(ft, &Options{Logger: quiet, RetryBackoff: 1})
	if err != nil {
		t.Fatal(err)
	}
	ft.failIncr.Store(2)
	ft.failCAS.Store(5)
	names := make([][]byte, 100)
	kinds := make([]Kind, len(names))
	for i := range names {
		names[i] = fmt.Appendf(nil, "n%03d", i)
		kinds[i] = TagV
	}
	ids := make([]ID, len(names))
	if err := u.ResolveBatch(ctx, TagV, names, ids); err != nil {
		t.Fatal(err)
	}
	checkTable(t, base.Table(), kinds, names, [][]ID{ids}, true)
}

// batchHammer makes every resolver resolve overlapping chunks of names
// through ResolveBatch, each goroutine in its own order, and returns what
// each goroutine saw (0 for names it did not ask for).
func batchHammer(t *testing.T, resolvers []*UIDs, goroutines int, kinds []Kind, names [][]byte) [][]ID {
	seen := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := resolvers[g%len(resolvers)]
			seen[g] = make([]ID, len(names))
			const chunk = 300
			for start := 0; start < len(names); start += chunk / 2 { // chunks overlap by half
				for _, k := range Kinds {
					var idx []int
					var batch [][]byte
					for j := start; j < min(start+chunk, len(names)); j++ {
						i := (j*7919 + g*131) % len(names)
						if kinds[i] == k {
							idx, batch = append(idx, i), append(batch, names[i])
						}
					}
					ids := make([]ID, len(batch))
					if err := u.ResolveBatch(ctx, k, batch, ids); err != nil {
						t.Errorf("goroutine %d: %v", g, err)
						return
					}
					for j, i := range idx {
						if prev := seen[g][i]; prev != 0 && prev != ids[j] {
							t.Errorf("goroutine %d: %s %s was %d, now %d", g, k, names[i], prev, ids[j])
						}
						seen[g][i] = ids[j]
					}
				}
			}
		}()
	}
	wg.Wait()
	return seen
}

// testBatchTwoDaemons: two UIDs (two daemons) on one store assign
// overlapping batches concurrently; every name ends with one UID both
// agree on, and forward and reverse maps match.
func testBatchTwoDaemons(t *testing.T, db storage.DB, n int) {
	kinds, names := raceWorkload(n)
	a, b := openUIDs(t, db, Options{}), openUIDs(t, db, Options{})
	seen := batchHammer(t, []*UIDs{a, b}, 4, kinds, names)
	if t.Failed() {
		return
	}
	checkTable(t, a.Table(), kinds, names, seen, true)
	for _, u := range []*UIDs{a, b} {
		for i, name := range names {
			id, err := u.Lookup(ctx, kinds[i], name)
			if err != nil || id != seen[0][i] {
				t.Fatalf("%s %s: lookup %d, %v; batch said %d", kinds[i], name, id, err, seen[0][i])
			}
		}
	}
	st := a.Stats()
	t.Logf("daemon a: tagv assigned %d, races lost %d", st[TagV].Assigned, st[TagV].RacesLost)
	r, err := a.Fsck(ctx, false)
	if err != nil || r.Errors() != 0 {
		t.Errorf("fsck after the race: %d errors, %v: %+v", r.Errors(), err, r.Problems)
	}
}

func TestResolveBatchTwoDaemons(t *testing.T) {
	testBatchTwoDaemons(t, openMemDB(t), *raceNames)
}

// TestResolveBatchStoreTimeout: a batch against a stalled store fails
// within StoreTimeout with a retryable error.
func TestResolveBatchStoreTimeout(t *testing.T) {
	base := openUIDs(t, openDB(t), Options{})
	st := &stalledTable{Table: base.Table()}
	u, err := New(st, &Options{Logger: quiet, StoreTimeout: 50e6})
	if err != nil {
		t.Fatal(err)
	}
	st.stalled.Store(true)
	err = u.ResolveBatch(context.Background(), Metric, byteNames("a", "b"), make([]ID, 2))
	if !storage.IsRetryable(err) {
		t.Errorf("stalled store: %v, want retryable", err)
	}
	st.stalled.Store(false)
	ids := make([]ID, 2)
	if err := u.ResolveBatch(ctx, Metric, byteNames("a", "b"), ids); err != nil || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("store back: %v %v", ids, err)
	}
}

// TestFind: Find reads without assigning; ResolveNewBatch skips the read
// and still gives a name another daemon assigned meanwhile that daemon's
// UID, leaving the reserved ID unused.
func TestFind(t *testing.T) {
	db := openMemDB(t)
	u, other := openUIDs(t, db, Options{}), openUIDs(t, db, Options{})
	x := mustResolve(t, other, TagK, "x")
	if id, found, err := u.Find(ctx, TagK, []byte("x")); err != nil || !found || id != x {
		t.Errorf("stored name: %d %v %v", id, found, err)
	}
	if id, found, err := u.Find(ctx, TagK, []byte("y")); err != nil || found || id != 0 {
		t.Errorf("new name: %d %v %v", id, found, err)
	}
	var ne *NameError
	if _, _, err := u.Find(ctx, TagK, []byte("")); !errors.As(err, &ne) {
		t.Errorf("empty name: %v", err)
	}
	if got := decodeCounter(rawGet(t, u.Table(), MaxIDRow, FamilyID, "tagk")); got != 1 {
		t.Errorf("Find moved MAXID to %d", got)
	}
	z := mustResolve(t, other, TagK, "z") // uid 2, unknown to u's cache
	ids := make([]ID, 2)
	if err := u.ResolveNewBatch(ctx, TagK, byteNames("z", "y"), ids); err != nil {
		t.Fatal(err)
	}
	if ids[0] != z || ids[1] != 4 {
		t.Errorf("ids %v, want [%d 4]", ids, z)
	}
	if rev := rawGet(t, u.Table(), []byte{0, 0, 3}, FamilyName, "tagk"); rev != nil {
		t.Errorf("the unused uid 3 kept reverse map %q", rev)
	}
	if st := u.Stats()[TagK]; st.RacesLost != 1 || st.Assigned != 1 {
		t.Errorf("races lost %d, assigned %d", st.RacesLost, st.Assigned)
	}
}

// TestResolveBatchExhausted: a batch larger than the IDs left assigns the
// names that fit, then fails as exhausted.
func TestResolveBatchExhausted(t *testing.T) {
	u := openUIDs(t, openMemDB(t), Options{Widths: series.Widths{TagK: 1}})
	names := make([][]byte, 260)
	for i := range names {
		names[i] = fmt.Appendf(nil, "k%03d", i)
	}
	err := u.ResolveBatch(ctx, TagK, names, make([]ID, len(names)))
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("260 names on 1 byte: %v", err)
	}
	for i := 0; i < 255; i++ {
		if id, err := u.Lookup(ctx, TagK, names[i]); err != nil || id != ID(i+1) {
			t.Fatalf("%s: %d, %v", names[i], id, err)
		}
	}
	if _, err := u.Lookup(ctx, TagK, names[255]); !errors.Is(err, ErrNoSuchName) {
		t.Errorf("%s: %v", names[255], err)
	}
}
