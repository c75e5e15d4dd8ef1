package uid

import (
	"bytes"
	"flag"
	"fmt"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
)

var raceNames = flag.Int("uid.race.names", 0, "names per concurrency test (default 10000, 1500 under -race)")

// raceWorkload is n names spread over the three kinds (n = 0: the default
// for this build).
func raceWorkload(n int) (kinds []Kind, names [][]byte) {
	if n == 0 {
		n = 10000
		if invariants.RaceEnabled {
			n = 1500 // the detector slows the engine ~20x; CI stays short
		}
	}
	for i := 0; i < n; i++ {
		kinds = append(kinds, Kinds[i%NumKinds])
		names = append(names, fmt.Appendf(nil, "name.%05d", i))
	}
	return kinds, names
}

// hammer makes every resolver resolve every name, each goroutine in its own
// order, and returns what each saw.
func hammer(t *testing.T, resolvers []*UIDs, goroutines int, kinds []Kind, names [][]byte) [][]ID {
	seen := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := resolvers[g%len(resolvers)]
			seen[g] = make([]ID, len(names))
			for j := range names {
				i := (j*7919 + g*131) % len(names) // a different order per goroutine
				id, err := u.Resolve(ctx, kinds[i], names[i])
				if err != nil {
					t.Errorf("goroutine %d: %s %s: %v", g, kinds[i], names[i], err)
					return
				}
				seen[g][i] = id
			}
		}()
	}
	wg.Wait()
	return seen
}

// checkTable verifies from a full scan that each name has exactly one
// forward map, each UID names one thing, and forward and reverse agree with
// what every goroutine was told.
func checkTable(t *testing.T, tbl storage.Table, kinds []Kind, names [][]byte, seen [][]ID, leaksAllowed bool) {
	t.Helper()
	fwd := [NumKinds]map[string]ID{{}, {}, {}}
	rev := [NumKinds]map[ID]string{{}, {}, {}}
	var maxID [NumKinds]ID
	sc := tbl.Scan(ctx, &storage.ScanOptions{})
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			k, _ := kindOfQualifier(c.Qualifier)
			switch {
			case c.Family == FamilyID && bytes.Equal(c.Row, MaxIDRow):
				maxID[k] = decodeCounter(c.Value)
			case c.Family == FamilyID:
				id, _, _ := ParseID(c.Value, 3)
				fwd[k][string(c.Row)] = id
			case c.Family == FamilyName:
				id, _, _ := ParseID(c.Row, 3)
				if prev, dup := rev[k][id]; dup {
					t.Fatalf("%s uid %d names %q and %q", k, id, prev, c.Value)
				}
				rev[k][id] = string(c.Value)
			}
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		k := kinds[i]
		id, ok := fwd[k][string(n)]
		if !ok {
			t.Fatalf("%s %s has no forward map", k, n)
		}
		if rev[k][id] != string(n) {
			t.Fatalf("%s %s -> %d but reverse says %q", k, n, id, rev[k][id])
		}
		for g := range seen {
			if seen[g][i] != id {
				t.Fatalf("goroutine %d was told %s %s = %d, table says %d", g, k, n, seen[g][i], id)
			}
		}
	}
	for _, k := range Kinds {
		if len(fwd[k]) != len(rev[k]) {
			t.Errorf("%s: %d forward maps, %d reverse maps", k, len(fwd[k]), len(rev[k]))
		}
		if !leaksAllowed && int(maxID[k]) != len(fwd[k]) {
			t.Errorf("%s: MAXID %d for %d names: ids leaked inside one process", k, maxID[k], len(fwd[k]))
		}
		if int(maxID[k]) < len(fwd[k]) {
			t.Errorf("%s: MAXID %d below %d names", k, maxID[k], len(fwd[k]))
		}
	}
}

// TestConcurrentAssignOneProcess: 8 goroutines assign the same 10,000 names
// of mixed kinds through one UIDs.
func TestConcurrentAssignOneProcess(t *testing.T) {
	kinds, names := raceWorkload(*raceNames)
	u := openUIDs(t, openMemDB(t), Options{})
	seen := hammer(t, []*UIDs{u}, 8, kinds, names)
	checkTable(t, u.Table(), kinds, names, seen, false)
}

// TestConcurrentAssignTwoDaemons: two UIDs with separate caches over one
// table, as two daemons sharing a store; leaked IDs are allowed, double
// assignments are not.
func TestConcurrentAssignTwoDaemons(t *testing.T) {
	kinds, names := raceWorkload(*raceNames)
	db := openMemDB(t)
	a, b := openUIDs(t, db, Options{}), openUIDs(t, db, Options{})
	seen := hammer(t, []*UIDs{a, b}, 8, kinds, names)
	checkTable(t, a.Table(), kinds, names, seen, true)
	st := a.Stats()
	t.Logf("daemon a: metrics assigned %d, races lost %d", st[Metric].Assigned, st[Metric].RacesLost)
	r, err := a.Fsck(ctx, false)
	if err != nil || r.Errors() != 0 {
		t.Errorf("fsck after the race: %d errors, %v: %+v", r.Errors(), err, r.Problems)
	}
}
