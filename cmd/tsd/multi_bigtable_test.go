package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/tsd-db/tsd/internal/daemontest"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/storage/bigtable"
	"github.com/tsd-db/tsd/uid"
)

// multiNames is how many new tag values both daemons create at once: the
// issue's 10,000 in the long run (-multi.names=10000, about 3 minutes on
// two shared cores), fewer by default so CI stays fast.
var multiNames = flag.Int("multi.names", 1000, "names both daemons create at once in TestTwoDaemonsOneBigtable")

// btEmulator is an in-process Bigtable emulator. The daemons it starts
// find it through BIGTABLE_EMULATOR_HOST in their own environment, not the
// test's, so tests with emulators of their own run in parallel.
type btEmulator struct{ addr string }

// startBTEmulator runs an emulator with Bigtable's message limits.
func startBTEmulator(t *testing.T) *btEmulator {
	t.Helper()
	srv, err := bttest.NewServer("127.0.0.1:0", grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(srv.Close) })
	return &btEmulator{addr: srv.Addr}
}

// env is the test's environment with BIGTABLE_EMULATOR_HOST naming e.
func (e *btEmulator) env() []string {
	return append(os.Environ(), "BIGTABLE_EMULATOR_HOST="+e.addr)
}

// start runs a daemon with args whose Bigtable client dials e.
func (e *btEmulator) start(t *testing.T, args ...string) *daemon {
	t.Helper()
	return &daemon{daemontest.StartEnv(t, e.env(), args...)}
}

// tool runs a tsd command (tsd tree sync, ...) that dials e.
func (e *btEmulator) tool(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runTSDEnv(t, e.env(), args...)
}

// btFlags put a daemon or a tsd command on the bigtable engine, the
// emulator's instance inst of project proj.
var btFlags = []string{"--tsd.storage.engine=bigtable", "--google.bigtable.project.id=proj",
	"--google.bigtable.instance.id=inst"}

// daemon runs a daemon on e (btFlags) with its data directory (the
// head's log) in dir, and args after those.
func (e *btEmulator) daemon(t *testing.T, dir string, args ...string) *daemon {
	t.Helper()
	return e.start(t, append(append(slices.Clone(btFlags), "--data="+dir), args...)...)
}

// putJSON posts points to /api/put?sync and fails unless all landed.
func (d *daemon) putJSON(t *testing.T, pts []map[string]any) {
	t.Helper()
	body, err := json.Marshal(pts)
	if err != nil {
		t.Error(err)
		return
	}
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/put?sync", body, false)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("put to %s: %d %s", d.Addr, resp.StatusCode, out)
	}
}

// queryDPS runs an /api/query GET and returns each result's dps by the
// value of tag k.
func (d *daemon) queryDPS(t *testing.T, m string, start, end int64) map[string]map[string]float64 {
	t.Helper()
	code, body := d.Get(t, fmt.Sprintf("/api/query?start=%d&end=%d&ms&m=%s", start, end, m))
	if code != http.StatusOK {
		t.Fatalf("query %s on %s: %d %s", m, d.Addr, code, body)
	}
	var res []struct {
		Tags map[string]string  `json:"tags"`
		DPS  map[string]float64 `json:"dps"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("query %s: %v in %.300s", m, err, body)
	}
	out := map[string]map[string]float64{}
	for _, r := range res {
		out[r.Tags["k"]] = r.DPS
	}
	return out
}

func namePoints(from, to int, ts int64, v int) []map[string]any {
	var pts []map[string]any
	for i := from; i < to; i++ {
		pts = append(pts, map[string]any{"metric": "multi.names", "timestamp": ts + int64(i)*1000, "value": v,
			"tags": map[string]string{"k": fmt.Sprintf("v%05d", i)}})
	}
	return pts
}

func collidePoints(ts int64, v int) []map[string]any {
	var pts []map[string]any
	for i := range 100 {
		pts = append(pts, map[string]any{"metric": "multi.collide", "timestamp": ts + int64(i)*1000, "value": v,
			"tags": map[string]string{"k": "x"}})
	}
	return pts
}

// TestTwoDaemonsOneBigtable is issue 3 item 4: two daemons on one
// emulator ingest overlapping series, create the same 10,000 names at
// once and collide on timestamps; UIDs stay one per name, each daemon
// reads its own points at once, and after both flush (SIGTERM) either
// daemon returns every point, the later write winning a collision.
func TestTwoDaemonsOneBigtable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two daemons and an emulator")
	}
	t.Parallel() // its own emulator
	begin := time.Now()
	emulator := startBTEmulator(t)
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	ds := []*daemon{emulator.daemon(t, dirs[0]), emulator.daemon(t, dirs[1])}
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Hour).UnixMilli()
	t.Logf("%v: daemons up", time.Since(begin).Round(time.Millisecond))

	// Both daemons create the same names concurrently, in batches, each
	// with its own timestamps (A on whole seconds, B half a second later).
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			for from := 0; from < *multiNames; from += 500 {
				d.putJSON(t, namePoints(from, min(from+500, *multiNames), t0+int64(i)*500, i+1))
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%v: %d names written through both daemons", time.Since(begin).Round(time.Millisecond), *multiNames)
	// Each daemon answers its own acknowledged points at once.
	for i, d := range ds {
		last := fmt.Sprintf("v%05d", *multiNames-1)
		got := d.queryDPS(t, "sum:multi.names{k=v00007|"+last+"}", t0, t0+3*3600_000)
		for _, k := range []string{"v00007", last} {
			n := map[string]int{"v00007": 7, last: *multiNames - 1}[k]
			ts := fmt.Sprint(t0 + int64(i)*500 + int64(n)*1000)
			if got[k][ts] != float64(i+1) {
				t.Fatalf("daemon %d: %s at %s = %v, want its own %d (all: %v)", i, k, ts, got[k][ts], i+1, got[k])
			}
		}
	}
	// Collisions: A writes, then B writes the same timestamps later.
	ds[0].putJSON(t, collidePoints(t0+3_600_000, 1))
	time.Sleep(5 * time.Millisecond)
	ds[1].putJSON(t, collidePoints(t0+3_600_000, 2))

	// B flushes first, A last: the later write must still win.
	for _, i := range []int{1, 0} {
		// SIGTERM flushes the head and drains the compaction queue (every
		// row was flushed early, mid-hour): give it time on a loaded box.
		if err := ds[i].StopWithin(t, 5*time.Minute); err != nil {
			t.Fatalf("daemon %d stop: %v\n%s", i, err, ds[i].Logs)
		}
	}
	t.Logf("%v: both daemons stopped", time.Since(begin).Round(time.Millisecond))
	checkUIDsUnique(t, emulator.addr)
	t.Logf("%v: uids checked", time.Since(begin).Round(time.Millisecond))
	checkRollupTables(t, emulator.addr, int64(2**multiNames+100), float64(3**multiNames+200))
	ds = []*daemon{emulator.daemon(t, dirs[0]), emulator.daemon(t, dirs[1])}
	t.Logf("%v: both daemons restarted", time.Since(begin).Round(time.Millisecond))
	for i, d := range ds {
		got := d.queryDPS(t, "sum:multi.names{k=*}", t0, t0+3*3600_000)
		if len(got) != *multiNames {
			t.Fatalf("daemon %d: %d series of multi.names, want %d", i, len(got), *multiNames)
		}
		for n := range *multiNames {
			k := fmt.Sprintf("v%05d", n)
			a, b := fmt.Sprint(t0+int64(n)*1000), fmt.Sprint(t0+500+int64(n)*1000)
			if dps := got[k]; len(dps) != 2 || dps[a] != 1 || dps[b] != 2 {
				t.Fatalf("daemon %d: %s = %v, want {%s:1 %s:2}", i, k, dps, a, b)
			}
		}
		col := d.queryDPS(t, "sum:multi.collide", t0, t0+3*3600_000)
		if dps := col["x"]; len(dps) != 100 {
			t.Fatalf("daemon %d: collide has %d points: %v", i, len(dps), col)
		}
		for ts, v := range col["x"] {
			if v != 2 {
				t.Fatalf("daemon %d: collide at %s = %v, want the later write 2", i, ts, v)
			}
		}
	}
}

// checkRollupTables opens the rollup tables on the emulator: the hour
// and the day cells both daemons computed add up to every raw point
// (multi.names: one point of each daemon per name; multi.collide: 100
// points, the later write of each), whichever daemon flushed which rows.
func checkRollupTables(t *testing.T, emulator string, count int64, sum float64) {
	t.Helper()
	db, err := bigtable.Open(context.Background(), bigtable.Options{Project: "proj", Instance: "inst", EmulatorHost: emulator})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"1h", "1d"} {
		_, n, s, _ := rollupTotals(t, db, rollup.DefaultConfig(), name)
		if n != count || s != sum {
			t.Errorf("%s cells: count %d sum %v, want %d and %v", name, n, s, count, sum)
		}
	}
}

// checkUIDsUnique opens the UID table on the emulator: every name of the
// test has one UID and no UID names two things.
func checkUIDsUnique(t *testing.T, emulator string) {
	t.Helper()
	ctx := context.Background()
	db, err := bigtable.Open(ctx, bigtable.Options{Project: "proj", Instance: "inst", EmulatorHost: emulator})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.Table(ctx, "tsdb-uid")
	if err != nil {
		t.Fatal(err)
	}
	u, err := uid.New(tbl, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := u.Fsck(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() != 0 {
		t.Fatalf("uid fsck: %+v", rep.Problems)
	}
	seen := map[uid.ID]string{}
	err = u.ForEach(ctx, uid.TagV, "v", func(name string, id uid.ID) error {
		if other, dup := seen[id]; dup {
			return fmt.Errorf("uid %d names %q and %q", id, other, name)
		}
		seen[id] = name
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != *multiNames {
		t.Fatalf("%d tag values named v*, want %d", len(seen), *multiNames)
	}
}
