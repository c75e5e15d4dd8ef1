package pebble_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

var (
	corruptSeed  = flag.Uint64("pebble.corrupt.seed", 0, "seed of the sstable byte-flip tests (0: time-based)")
	corruptFlips = flag.Int("pebble.corrupt.flips", 24, "byte flips TestDamagedSSTables tries, one store copy each")
)

// Three tables shaped like tsd's: data rows, UID rows with two families,
// and meta rows.
var damageSpecs = []storage.TableSpec{
	{Name: "data", Families: []storage.FamilySpec{{Name: "t"}}},
	{Name: "uid", Families: []storage.FamilySpec{{Name: "id"}, {Name: "name"}}},
	{Name: "meta", Families: []storage.FamilySpec{{Name: "m"}}},
}

// cellID names one cell version of the model.
type cellID struct {
	table, row, family, qualifier string
	ts                            int64
}

// storeModel is what the store holds: value by cell.
type storeModel map[cellID]string

func (m storeModel) apply(t testing.TB, db storage.DB, table string, muts []storage.Mutation) {
	t.Helper()
	tb, err := db.Table(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	for _, mu := range muts {
		for _, c := range mu.Cells {
			m[cellID{table, string(mu.Row), c.Family, string(c.Qualifier), c.Timestamp}] = string(c.Value)
		}
	}
}

// rowsOf returns the model's rows of a table, sorted.
func (m storeModel) rowsOf(table string) []string {
	set := map[string]bool{}
	for id := range m {
		if id.table == table {
			set[id.row] = true
		}
	}
	rows := make([]string, 0, len(set))
	for r := range set {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	return rows
}

// buildDamageStore writes the three tables on fs, compacts them into the
// bottom level, then writes newer cells to some rows in a later run, so the
// store has sstables in two levels.
func buildDamageStore(t *testing.T, fs vfs.FS, rng *rand.Rand) storeModel {
	m := storeModel{}
	db := openDamageStore(t, fs)
	for _, s := range damageSpecs {
		if err := db.EnsureTable(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{"data": 3000, "uid": 800, "meta": 800}
	for _, s := range damageSpecs {
		var muts []storage.Mutation
		for i := range counts[s.Name] {
			muts = append(muts, randomRow(rng, s, i, 1000))
		}
		m.apply(t, db, s.Name, muts)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDamageStore(t, fs)
	for _, s := range damageSpecs {
		var muts []storage.Mutation
		for range counts[s.Name] / 10 {
			muts = append(muts, randomRow(rng, s, rng.IntN(counts[s.Name]), 2000))
		}
		m.apply(t, db, s.Name, muts)
	}
	db.Close()
	db = openDamageStore(t, fs) // replays pebble's log into a level-0 sstable
	db.Close()
	return m
}

// randomRow is row i of table s, one cell per family with a random value.
func randomRow(rng *rand.Rand, s storage.TableSpec, i int, ts int64) storage.Mutation {
	mu := storage.Mutation{Row: fmt.Appendf(nil, "%s\x00%06d", s.Name[:1], i)}
	for _, f := range s.Families {
		v := make([]byte, 8+rng.IntN(40))
		for j := range v {
			v[j] = byte(rng.IntN(256))
		}
		mu.Cells = append(mu.Cells, storage.Cell{Family: f.Name, Qualifier: []byte{byte(i), 0}, Timestamp: ts * 1000, Value: v})
	}
	return mu
}

func openDamageStore(t testing.TB, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("/db", pebble.SmallBlocks(&pebble.Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

// flipSST flips one random byte of a random sstable, chosen by size, and
// returns the file's path and the offset.
func flipSST(t testing.TB, fs vfs.FS, rng *rand.Rand) (string, int) {
	names, _ := fs.List("/db")
	var ssts []string
	var sizes []int
	total := 0
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			b := vfstest.ReadFile(t, fs, "/db/"+n)
			ssts, sizes = append(ssts, n), append(sizes, len(b))
			total += len(b)
		}
	}
	if len(ssts) < 2 {
		t.Fatalf("only %d sstables", len(ssts))
	}
	at := rng.IntN(total)
	for i, n := range ssts {
		if at < sizes[i] {
			b := vfstest.ReadFile(t, fs, "/db/"+n)
			b[at] ^= byte(1 + rng.IntN(255))
			vfstest.WriteFile(t, fs, "/db/"+n, b)
			return "/db/" + n, at
		}
		at -= sizes[i]
	}
	panic("unreachable")
}

// TestDamagedSSTables flips one byte of a copy of a real store at a time
// (seeded) and checks that the store neither panics nor returns wrong
// data: every read returns exactly the model's cells or a *DamageError
// naming the damaged file; writes into the damaged file's range are
// refused as retryable, writes elsewhere succeed; compaction fails without
// a panic. Then Repair: afterwards the store opens, holds every cell of the
// model and every write made meanwhile except the cells of the rows it
// reports lost, holds nothing else, and a second Repair finds nothing.
func TestDamagedSSTables(t *testing.T) {
	seed := *corruptSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-pebble.corrupt.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 6))
	orig := vfs.NewMem()
	model := buildDamageStore(t, orig, rng)
	var found, lostRows, repaired int
	flips := *corruptFlips
	if invariants.RaceEnabled {
		// One store copy and a full check per flip, each a few seconds
		// under the detector: the race step tries a few, the test step
		// all of them.
		flips = min(flips, 4)
	}
	for i := range flips {
		fs := pebble.CopyDir(t, orig)
		file, at := flipSST(t, fs, rng)
		m := storeModel{}
		for k, v := range model {
			m[k] = v
		}
		damaged := checkDamagedStore(t, fs, file, m)
		rep := checkRepair(t, fs, m)
		if damaged {
			found++
		}
		if len(rep.Spans) > 0 {
			repaired++
		}
		for _, s := range rep.Spans {
			lostRows += len(s.Lost)
		}
		if t.Failed() {
			t.Fatalf("flip %d: byte %d of %s", i, at, file)
		}
	}
	t.Logf("%d flips: %d found by reads, %d repaired, %d lost row ranges", flips, found, repaired, lostRows)
}

// checkDamagedStore opens a damaged copy and checks reads, writes and
// compaction against m, adding the writes that succeed to m. It reports
// whether reads found the damage.
func checkDamagedStore(t *testing.T, fs vfs.FS, file string, m storeModel) bool {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	db, err := pebble.Open("/db", pebble.SmallBlocks(&pebble.Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		// The catalog has a copy beside the store: Open never fails for
		// one damaged sstable.
		t.Errorf("open: %v", err)
		return true
	}
	defer db.Close()
	for _, s := range damageSpecs {
		checkTableReads(t, db, s.Name, file, m)
	}
	checkWrites(t, db, m)
	if err := db.Compact(ctx); err != nil && !errors.Is(err, storage.ErrCorruption) && !strings.Contains(err.Error(), "corruption") {
		t.Errorf("compact: %v", err)
	}
	return len(db.DamagedFiles()) > 0
}

// checkTableReads scans a table and gets some of its rows: each read gives
// the model's cells or fails naming file.
func checkTableReads(t *testing.T, db *pebble.DB, table, file string, m storeModel) {
	tb, err := db.Table(ctx, table)
	if err != nil {
		t.Errorf("table %s: %v", table, err)
		return
	}
	got := storeModel{}
	sc := tb.Scan(ctx, nil)
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			got[cellID{table, string(c.Row), c.Family, string(c.Qualifier), c.Timestamp}] = string(c.Value)
		}
	}
	err = sc.Close()
	checkReadErr(t, err, file, "scan "+table)
	for id, v := range got {
		if m[id] != v {
			t.Errorf("scan %s: cell %+v = %x, want %x", table, id, v, m[id])
		}
	}
	if err == nil && len(got) != countTable(m, table) {
		t.Errorf("scan %s: %d cells, want %d", table, len(got), countTable(m, table))
	}
	rows := m.rowsOf(table)
	for i := 0; i < len(rows); i += 37 {
		cells, err := tb.Get(ctx, []byte(rows[i]), nil)
		checkReadErr(t, err, file, "get "+table)
		for _, c := range cells {
			if id := (cellID{table, rows[i], c.Family, string(c.Qualifier), c.Timestamp}); m[id] != string(c.Value) {
				t.Errorf("get %s: cell %+v = %x, want %x", table, id, c.Value, m[id])
			}
		}
	}
}

func countTable(m storeModel, table string) int {
	n := 0
	for id := range m {
		if id.table == table {
			n++
		}
	}
	return n
}

// checkReadErr accepts no error or a *DamageError naming file.
func checkReadErr(t *testing.T, err error, file, what string) {
	var de *pebble.DamageError
	if err != nil && (!errors.As(err, &de) || de.File != file || de.Write || !errors.Is(err, storage.ErrCorruption) ||
		!strings.Contains(err.Error(), file) || de.Keys == "") {
		t.Errorf("%s: %v, want a damage error naming %s", what, err, file)
	}
}

// checkWrites writes one row inside and one outside each damaged file's
// range: the first is refused as retryable, the second lands (and joins m).
func checkWrites(t *testing.T, db *pebble.DB, m storeModel) {
	for _, s := range damageSpecs {
		tb, _ := db.Table(ctx, s.Name)
		for _, row := range []string{m.rowsOf(s.Name)[0], s.Name[:1] + "\x00999999"} {
			c := storage.Cell{Family: s.Families[0].Name, Qualifier: []byte("w"), Timestamp: 3000_000, Value: []byte("written after")}
			err := tb.Put(ctx, []byte(row), []storage.Cell{c})
			inside := false
			for _, f := range db.DamagedFiles() {
				inside = inside || f.Keys != "" && rowInFile(db, s.Name, row, f)
			}
			var de *pebble.DamageError
			switch {
			case inside && (!errors.As(err, &de) || !de.Write || !storage.IsRetryable(err)):
				t.Errorf("put %s %q in a damaged range: %v, want a retryable refusal", s.Name, row, err)
			case !inside && err != nil:
				t.Errorf("put %s %q outside damaged ranges: %v", s.Name, row, err)
			case err == nil:
				m[cellID{s.Name, row, c.Family, string(c.Qualifier), c.Timestamp}] = string(c.Value)
			}
		}
	}
}

// rowInFile reports whether the cell written by checkWrites to row falls
// in f's key range.
func rowInFile(db *pebble.DB, table, row string, f pebble.DamagedFile) bool {
	key := pebble.CellKey(db, table, []byte(row), damageFamily(table), []byte("w"), 3000_000)
	return bytes.Compare(key, f.Smallest) >= 0 && (bytes.Compare(key, f.Largest) < 0 || !f.LargestExclusive && bytes.Equal(key, f.Largest))
}

func damageFamily(table string) string {
	for _, s := range damageSpecs {
		if s.Name == table {
			return s.Families[0].Name
		}
	}
	return ""
}

// checkRepair repairs the store and checks the result against m.
func checkRepair(t *testing.T, fs vfs.FS, m storeModel) *pebble.RepairReport {
	t.Helper()
	rep, err := pebble.Repair(ctx, "/db", pebble.SmallBlocks(&pebble.Options{FS: fs, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	db := openDamageStore(t, fs)
	for _, s := range damageSpecs {
		tb, err := db.Table(ctx, s.Name)
		if err != nil {
			t.Errorf("table %s after repair: %v (report %+v)", s.Name, err, rep.Spans)
			continue
		}
		got := storeModel{}
		sc := tb.Scan(ctx, nil)
		for sc.Next() {
			for _, c := range sc.Row().Cells {
				got[cellID{s.Name, string(c.Row), c.Family, string(c.Qualifier), c.Timestamp}] = string(c.Value)
			}
		}
		if err := sc.Close(); err != nil {
			t.Errorf("scan %s after repair: %v", s.Name, err)
		}
		for id, v := range m {
			if id.table == s.Name && got[id] != v && !reportedLost(rep, id) {
				t.Errorf("cell %+v lost by the repair, not reported", id)
			}
		}
		for id, v := range got {
			if m[id] != v {
				t.Errorf("cell %+v = %x after repair, want %x", id, v, m[id])
			}
		}
	}
	db.Close()
	again, err := pebble.Repair(ctx, "/db", pebble.SmallBlocks(&pebble.Options{FS: fs, Logger: slog.New(slog.DiscardHandler)}))
	if err != nil || len(again.Spans) != 0 {
		t.Errorf("second repair: %v, %+v", err, again)
	}
	return rep
}

// reportedLost reports whether the repair said the cell's row was lost.
func reportedLost(rep *pebble.RepairReport, id cellID) bool {
	for _, s := range rep.Spans {
		for _, l := range s.Lost {
			if l.Table == id.table && (l.FromStart || l.FromRow != nil && id.row >= string(l.FromRow)) &&
				(l.ToEnd || l.ToRow != nil && id.row <= string(l.ToRow)) {
				return true
			}
		}
	}
	return false
}

// TestDamagedCatalog damages the block holding the table catalog: the store
// opens from the catalog's copy, and Repair writes the lost entries back,
// so the store opens without the copy afterwards.
func TestDamagedCatalog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 6))
	orig := vfs.NewMem()
	model := buildDamageStore(t, orig, rng)
	fs := pebble.CopyDir(t, orig)
	names, _ := fs.List("/db")
	var biggest string
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") && (biggest == "" || len(vfstest.ReadFile(t, fs, "/db/"+n)) > len(vfstest.ReadFile(t, fs, "/db/"+biggest))) {
			biggest = n
		}
	}
	b := vfstest.ReadFile(t, fs, "/db/"+biggest)
	b[20] ^= 0x55 // the first data block: catalog entries and the id counter
	vfstest.WriteFile(t, fs, "/db/"+biggest, b)
	var logBuf bytes.Buffer
	db, err := pebble.Open("/db", &pebble.Options{FS: fs, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatalf("open with a damaged catalog: %v", err)
	}
	if !strings.Contains(logBuf.String(), "the table catalog is damaged in the store; using its copy") {
		t.Errorf("no error line about the catalog:\n%s", logBuf.String())
	}
	specs, err := db.Tables(ctx)
	if err != nil || len(specs) != len(damageSpecs) {
		t.Errorf("tables from the copy: %v, %v", specs, err)
	}
	db.Close()
	rep := checkRepair(t, fs, model)
	if !slices.Equal(rep.Restored, []string{"data", "meta", "uid"}) || !rep.RestoredCounter {
		t.Errorf("restored %v (counter %v), want every table and the counter", rep.Restored, rep.RestoredCounter)
	}
	if err := fs.Remove("/db/TSD-CATALOG"); err != nil {
		t.Fatal(err)
	}
	db = openDamageStore(t, fs)
	defer db.Close()
	if specs, err := db.Tables(ctx); err != nil || len(specs) != len(damageSpecs) {
		t.Errorf("tables after repair, without the copy: %v, %v", specs, err)
	}
}
