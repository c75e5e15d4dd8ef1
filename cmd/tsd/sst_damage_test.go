package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

var sstSeed = flag.Uint64("sst.corrupt.seed", 0, "seed of TestDaemonDamagedSSTable's byte flips (0: time-based)")

const (
	sstMetrics = 12
	sstHosts   = 3
	sstHours   = 6
)

// sstT0 is the first point's time: a whole hour two days ago, so every row
// is flushed when the daemon stops.
var sstT0 = time.Now().Add(-48 * time.Hour).Truncate(time.Hour).Unix()

func sstMetric(m int) string { return fmt.Sprintf("sst.m%02d", m) }

// sstValue is the value of metric m, host h at minute i.
func sstValue(m, h, i int) float64 { return float64(m*100000 + h*10000 + i) }

// buildSSTStore runs a daemon that stores sstMetrics metrics of sstHosts
// hosts, a point a minute for sstHours hours, stops it (which flushes every
// row), and compacts the store so every table lies in the bottom level.
func buildSSTStore(t *testing.T) string {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	for m := range sstMetrics {
		for h := range sstHosts {
			var pts []map[string]any
			for i := range sstHours * 60 {
				pts = append(pts, map[string]any{"metric": sstMetric(m), "timestamp": sstT0 + int64(i)*60,
					"value": sstValue(m, h, i), "tags": map[string]string{"k": "h" + strconv.Itoa(h)}})
			}
			d.putJSON(t, pts)
		}
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

// copyDir copies a store directory.
func copyDir(t *testing.T, src string) string {
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// flipIn returns a copy of the store with one byte of an sstable flipped
// where reading table fails (reading others may fail too: the UID table's
// few rows share a block): the offset is drawn from rng until one
// qualifies, checked on a scratch copy.
func flipIn(t *testing.T, src, table string, rng *rand.Rand) (dir, file string) {
	ssts, _ := filepath.Glob(filepath.Join(src, "*.sst"))
	for range 400 {
		file = ssts[rng.IntN(len(ssts))]
		b, _ := os.ReadFile(file)
		off := rng.IntN(len(b))
		b[off] ^= byte(1 + rng.IntN(255))
		probe := copyDir(t, src)
		os.WriteFile(filepath.Join(probe, filepath.Base(file)), b, 0o644)
		if slices.Contains(failing(t, probe), table) {
			dir = copyDir(t, src)
			os.WriteFile(filepath.Join(dir, filepath.Base(file)), b, 0o644)
			t.Logf("table %s: flipped byte %d of %s", table, off, filepath.Base(file))
			return dir, filepath.Join(dir, filepath.Base(file))
		}
	}
	t.Fatalf("no flip found that damages table %s", table)
	return "", ""
}

// failing opens a store and returns the tables whose scan fails.
func failing(t *testing.T, dir string) []string {
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	if err != nil {
		return nil
	}
	defer db.Close()
	specs, _ := db.Tables(context.Background())
	var bad []string
	for _, s := range specs {
		tb, _ := db.Table(context.Background(), s.Name)
		sc := tb.Scan(context.Background(), nil)
		for sc.Next() {
		}
		if err := sc.Close(); errors.Is(err, storage.ErrCorruption) {
			bad = append(bad, s.Name)
		}
	}
	return bad
}

// TestDaemonDamagedSSTable flips a byte in a copy of a real store's
// sstable (seeded, -sst.corrupt.seed), once where only the data table
// reads it, once the UID table, once the meta table. Each time the daemon
// starts without a panic and serves: queries of undamaged series answer,
// those meeting the damage answer 500 naming the file and its key range,
// the store counts the damaged sstable in /metrics. tsd repair, run through
// the binary on the stopped store, names the file and what was lost (the
// metrics and hours for the data table); afterwards the daemon serves every
// point but those, with no error.
func TestDaemonDamagedSSTable(t *testing.T) {
	t.Parallel() // its own daemon
	seed := *sstSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-sst.corrupt.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	orig := buildSSTStore(t)
	for _, table := range []string{"tsdb", uid.DefaultTable, "tsdb-meta"} {
		t.Run(table, func(t *testing.T) {
			dir, file := flipIn(t, orig, table, rng)
			d := startDaemon(t, "--data", dir)
			failed := checkDamagedServing(t, d, file)
			if table == "tsdb" && failed == 0 {
				t.Errorf("no query met the damaged data block")
			}
			d.Stop(t)
			out, code := runTSD(t, "repair", "--data", dir)
			t.Logf("tsd repair:\n%s", out)
			if code != exitOK || !strings.Contains(out, "damaged sstable "+file) {
				t.Fatalf("tsd repair: exit %d, output does not name %s:\n%s", code, file, out)
			}
			lost := checkRepairReport(t, table, out)
			if strings.Contains(out, "run tsd index rebuild") {
				if out, code := runTSD(t, "index", "rebuild", "--data", dir); code != exitOK {
					t.Fatalf("tsd index rebuild: %d\n%s", code, out)
				}
			}
			d = startDaemon(t, "--data", dir)
			checkRepairedServing(t, d, lost, strings.Contains(out, "lost UID table rows"))
			d.Stop(t)
			if out, _ := runTSD(t, "repair", "--data", dir); !strings.Contains(out, "no damage found") {
				t.Errorf("a second repair still found damage:\n%s", out)
			}
		})
	}
}

// checkDamagedServing queries every metric on a daemon over a damaged
// store: each answers 200, or 500 naming file; it returns how many failed.
func checkDamagedServing(t *testing.T, d *daemon, file string) int {
	t.Helper()
	failed := 0
	for m := range sstMetrics {
		code, body := d.Get(t, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:%s%%7Bk=*%%7D", sstT0, sstT0+sstHours*3600, sstMetric(m)))
		switch {
		case code == 200:
		case code >= 500 && strings.Contains(body, file):
			failed++
		default:
			t.Errorf("query %s: %d %s", sstMetric(m), code, body)
		}
	}
	if code, body := d.Get(t, "/metrics"); code != 200 || failed > 0 && !strings.Contains(body, "tsd_storage_damaged_sstables_total 1\n") {
		t.Errorf("/metrics lacks tsd_storage_damaged_sstables_total 1")
	}
	if failed > 0 && !strings.Contains(d.Logs.String(), "level=ERROR msg=\"pebble: damaged sstable") {
		t.Errorf("no error line names the damaged sstable:\n%s", d.Logs)
	}
	if failed > 0 {
		// The store is one sstable: a new name's UID row falls in its
		// range, so the write is refused, as retryable. (The put answer
		// does not carry a commit's reason yet.)
		body := []byte(`[{"metric":"sst.new","timestamp":` + strconv.FormatInt(sstT0, 10) + `,"value":1,"tags":{"k":"h0"}}]`)
		resp, out := post(t, "POST", "http://"+d.Addr+"/api/put?details", body, false)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Errorf("put of a new metric into the damaged range: %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), out)
		}
	}
	return failed
}

// lostHours are the metric hours tsd repair said were lost.
type lostHours map[string][2]int64

var lostDataRE = regexp.MustCompile(`lost data: (?:salt bucket \w+: )?metric (\S+) \((\w+|name unknown)\) (.*)`)

// checkRepairReport checks tsd repair's report names what a flip in table
// loses, and returns the lost metric hours of the data table, in any salt
// bucket (the test does not know its series' buckets).
func checkRepairReport(t *testing.T, table, out string) lostHours {
	lost := lostHours{}
	for _, m := range lostDataRE.FindAllStringSubmatch(out, -1) {
		name := m[1]
		if m[2] == "name unknown" { // its UID row was lost too: UIDs follow the order of buildSSTStore's puts
			n, _ := strconv.ParseInt(m[1], 16, 64)
			name = sstMetric(int(n) - 1)
		}
		m[1], m[2] = name, m[3]
		span := [2]int64{0, 1 << 62}
		switch f := strings.Fields(m[2]); {
		case len(f) == 4 && f[0] == "hours" && f[2] == "to":
			span = [2]int64{hour(t, f[1]), hour(t, f[3]) + 3599}
		case len(f) == 3 && f[0] == "hours" && f[1] == "from":
			span[0] = hour(t, f[2])
		case len(f) == 3 && f[0] == "hours" && f[1] == "to":
			span[1] = hour(t, f[2]) + 3599
		case m[2] != "every hour":
			t.Fatalf("unexpected line %q", m[0])
		}
		if old, ok := lost[m[1]]; ok {
			span = [2]int64{min(old[0], span[0]), max(old[1], span[1])}
		}
		lost[m[1]] = span
	}
	if strings.Contains(out, "every hour of every metric") { // the UID table could not name them
		for m := range sstMetrics {
			lost[sstMetric(m)] = [2]int64{0, 1 << 62}
		}
	}
	want := map[string]string{"tsdb": "lost data: ", uid.DefaultTable: "lost UID table rows", "tsdb-meta": "lost series index rows"}[table]
	if !strings.Contains(out, want) || table == "tsdb" && len(lost) == 0 {
		t.Errorf("tsd repair's report lacks %q:\n%s", want, out)
	}
	return lost
}

func hour(t *testing.T, s string) int64 {
	h, err := time.Parse("2006-01-02T15:04Z", s)
	if err != nil {
		t.Fatalf("bad hour %q", s)
	}
	return h.Unix()
}

// checkRepairedServing checks a repaired store serves every point but
// those of lost metric hours; where UID rows were lost, metrics that no
// longer resolve are let pass.
func checkRepairedServing(t *testing.T, d *daemon, lost lostHours, uidLoss bool) {
	t.Helper()
	missing := 0
	for m := range sstMetrics {
		code, body := d.Get(t, fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:%s%%7Bk=*%%7D", sstT0, sstT0+sstHours*3600, sstMetric(m)))
		if code != 200 {
			if !uidLoss || code >= 500 {
				t.Errorf("query %s after repair: %d %s", sstMetric(m), code, body)
			}
			continue
		}
		dps := d.queryDPS(t, fmt.Sprintf("sum:%s%%7Bk=*%%7D", sstMetric(m)), sstT0*1000, (sstT0+sstHours*3600)*1000)
		for h := range sstHosts {
			for i := range sstHours * 60 {
				ts := sstT0 + int64(i)*60
				v, ok := dps["h"+strconv.Itoa(h)][strconv.FormatInt(ts*1000, 10)]
				span, isLost := lost[sstMetric(m)]
				switch {
				case ok && v != sstValue(m, h, i):
					t.Errorf("%s h%d minute %d = %v", sstMetric(m), h, i, v)
				case !ok && !(isLost && ts >= span[0] && ts <= span[1]):
					t.Errorf("%s h%d minute %d lost but not reported", sstMetric(m), h, i)
				case !ok:
					missing++
				}
			}
		}
	}
	t.Logf("after repair: %d points missing, in the hours reported lost", missing)
}

// TestRepairCommand: tsd repair prints its usage, refuses a store a daemon
// holds, and leaves an undamaged store as it is.
func TestRepairCommand(t *testing.T) {
	if out, code := runTSD(t, "repair", "--help"); code != exitOK || !strings.Contains(out, "Usage: tsd repair") {
		t.Errorf("tsd repair --help: %d\n%s", code, out)
	}
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	if out, code := runTSD(t, "repair", "--data", data); code != exitFailed || !strings.Contains(out, "stop the daemon first") {
		t.Errorf("tsd repair of a running daemon's store: %d\n%s", code, out)
	}
	d.Stop(t)
	if out, code := runTSD(t, "repair", "--data", data); code != exitOK || !strings.Contains(out, "no damage found") {
		t.Errorf("tsd repair of an undamaged store: %d\n%s", code, out)
	}
}
