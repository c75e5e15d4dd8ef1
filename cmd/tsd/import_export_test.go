package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/textimport"
)

var importSeed = flag.Uint64("import.seed", 0, "seed of the import/export round-trip data (0: from the clock)")

// runTool runs the tsd binary with stdin and returns stdout, stderr and
// the exit code.
func runBinary(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(tsdBinary(t), args...)
	cmd.Dir = t.TempDir()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// genDay writes a small day in the import format: series of several
// metrics with tags, ints, float32-exact and float64 values, second and
// millisecond timestamps, and names holding a space and '=' (escaped).
func genDay(t *testing.T, seed uint64, series, step int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b bytes.Buffer
	base := int64(1356998400) // 2013-01-01 00:00 UTC
	for s := range series {
		metric := fmt.Sprintf("sys.m%d", s%4)
		tags := fmt.Sprintf("host=web%02d dc=dc%d", s, s%3)
		if s == 0 {
			metric, tags = `odd\ name`, `k\=1=v\ 1`
		}
		for i := int64(0); i < 86400; i += int64(step) {
			ts := fmt.Sprint(base + i)
			if s%5 == 1 {
				ts = fmt.Sprint((base+i)*1000 + int64(rng.IntN(1000)))
			}
			var v string
			switch (s + int(i)) % 3 {
			case 0:
				v = fmt.Sprint(rng.Int64N(1<<40) - 1<<39)
			case 1:
				v = fmt.Sprint(float32(rng.Float64()*1000 - 500)) // float32-exact
			default:
				v = fmt.Sprint(rng.NormFloat64() * 1e6)
			}
			fmt.Fprintf(&b, "%s %s %s %s\n", metric, ts, v, tags)
		}
	}
	return b.Bytes()
}

// points reads an import-format text into series -> ms -> float64 bits.
func points(t *testing.T, text []byte) map[string]map[int64]uint64 {
	t.Helper()
	r, err := textimport.NewReader(bytes.NewReader(text), &textimport.Options{AllowSpecialChars: " ="})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int64]uint64{}
	for r.Next() {
		if err := r.Bad(); err != nil {
			t.Fatalf("bad line: %v", err)
		}
		p := r.Point()
		tags := make([]string, 0, len(p.Tags))
		for _, tg := range p.Tags {
			tags = append(tags, string(tg.Key)+"="+string(tg.Value))
		}
		sort.Strings(tags)
		key := string(p.Metric) + "{" + strings.Join(tags, ",") + "}"
		if out[key] == nil {
			out[key] = map[int64]uint64{}
		}
		out[key][p.Value.T] = math.Float64bits(p.Value.Float())
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return out
}

func sameImportPoints(t *testing.T, what string, got, want map[string]map[int64]uint64) {
	t.Helper()
	n := 0
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			t.Errorf("%s: series %s has %d points, want %d", what, k, len(g), len(w))
			continue
		}
		for ts, v := range w {
			if g[ts] != v {
				if n++; n < 5 {
					t.Errorf("%s: %s at %d = %v, want %v", what, k, ts, math.Float64frombits(g[ts]), math.Float64frombits(v))
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d series, want %d", what, len(got), len(want))
	}
}

// TestImportExportRoundTrip: a day imported into a stopped store, exported,
// imported into a fresh store (through a pipe: FILE -) and exported again
// gives back every series, timestamp and value, for both store formats.
func TestImportExportRoundTrip(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	seed := *importSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -import.seed=%d)", seed, seed)
	day := genDay(t, seed, 12, 60)
	want := points(t, day)
	special := "--tsd.core.tag.allow_specialchars= ="
	for _, format := range []string{"dense", "opentsdb"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "day.txt.gz")
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(day)
			zw.Close()
			if err := os.WriteFile(in, z.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			fmtFlag := "--tsd.storage.format=" + format
			out, errs, code := runBinary(t, nil, "import", "--data", a, fmtFlag, special, in)
			if code != exitOK || !strings.Contains(out, fmt.Sprintf("imported %d points from 1 files", bytes.Count(day, []byte("\n")))) {
				t.Fatalf("import: exit %d\n%s%s", code, out, errs)
			}
			exp1, errs, code := runBinary(t, nil, "export", "--data", a, special, "2013/01/01-00:00", "2013/01/02-00:00")
			if code != exitOK {
				t.Fatalf("export: exit %d\n%s", code, errs)
			}
			sameImportPoints(t, "first export", points(t, []byte(exp1)), want)
			out, errs, code = runBinary(t, []byte(exp1), "import", "--data", b, fmtFlag, special, "-")
			if code != exitOK {
				t.Fatalf("import -: exit %d\n%s%s", code, out, errs)
			}
			exp2, errs, code := runBinary(t, nil, "export", "--data", b, special, "1356998400", "1357084800")
			if code != exitOK {
				t.Fatalf("second export: exit %d\n%s", code, errs)
			}
			sameImportPoints(t, "round trip", points(t, []byte(exp2)), want)
		})
	}
}

// TestImportDaemonProtocols imports into a running daemon over HTTP and
// telnet and exports it back through /api/query.
func TestImportDaemonProtocols(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	day := genDay(t, 7, 6, 300)
	// Telnet cannot carry a name with a space: the first series' lines are
	// bad lines there; HTTP takes them.
	plain := day[bytes.IndexByte(day, '\n')+1:]
	plain = plain[bytes.Index(plain, []byte("\nsys."))+1:]
	for _, c := range []struct {
		proto string
		data  []byte
	}{{"http", day}, {"tcp", plain}} {
		t.Run(c.proto, func(t *testing.T) {
			d := startDaemon(t, "--data", t.TempDir(), "--tsd.core.tag.allow_specialchars= =")
			f := filepath.Join(t.TempDir(), "in.txt")
			os.WriteFile(f, c.data, 0o644)
			out, errs, code := runBinary(t, nil, "import", "--url", c.proto+"://"+d.Addr, "--batch", "500", "--tsd.core.tag.allow_specialchars= =", f)
			if code != exitOK {
				t.Fatalf("import: exit %d\n%s%s\n%s", code, out, errs, d.Logs)
			}
			exp, errs, code := runBinary(t, nil, "export", "--url", "http://"+d.Addr, "--tsd.core.tag.allow_specialchars= =", "1356998400", "1357084799")
			if code != exitOK {
				t.Fatalf("export --url: exit %d\n%s", code, errs)
			}
			sameImportPoints(t, c.proto, points(t, []byte(exp)), points(t, c.data))
		})
	}
}

// TestImportBadLines: bad lines are named FILE:LINE and skipped (exit 3),
// --strict stops at the first (exit 1), usage errors exit 2 (--help 0,
// usage on stdout), a locked
// store is refused with a clear message.
func TestImportBadLines(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	dir := t.TempDir()
	f := filepath.Join(dir, "in.txt")
	os.WriteFile(f, []byte("m 1356998400 1 k=v\nm 1356998400 x k=v\nm 1356998460 2 k=v\nm\n"), 0o644)
	data := filepath.Join(dir, "data")
	out, errs, code := runBinary(t, nil, "import", "--data", data, f)
	if code != exitSkipped || !strings.Contains(errs, f+":2: put: invalid value: Invalid character 'x' in x") ||
		!strings.Contains(errs, f+":4: put: illegal argument: not enough arguments") ||
		!strings.Contains(out, "imported 2 points from 1 files") || !strings.Contains(out, "2 lines skipped") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	out, errs, code = runBinary(t, nil, "import", "--data", filepath.Join(dir, "strict"), "--strict", f)
	if code != exitFailed || !strings.Contains(errs, f+":2: bad line (--strict)") {
		t.Errorf("--strict: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code = runBinary(t, nil, "import", "--url", "ftp://x", f); code != exitUsage ||
		!strings.Contains(errs, "tsd import: --url \"ftp://x\": want http://HOST:PORT or tcp://HOST:PORT\nRun 'tsd import --help' for usage.\n") {
		t.Errorf("bad --url: exit %d %s", code, errs)
	}
	if out, _, code = runBinary(t, nil, "import"); code != exitUsage || !strings.HasPrefix(out, "Usage: tsd import ") {
		t.Errorf("no file: exit %d %s", code, out)
	}
	if out, _, code = runBinary(t, nil, "import", "--help"); code != exitOK || !strings.HasPrefix(out, "Usage: tsd import ") {
		t.Errorf("--help: exit %d %s", code, out)
	}
	if _, errs, code = runBinary(t, nil, "import", "--data", data, filepath.Join(dir, "missing.txt")); code != exitFailed {
		t.Errorf("missing file: exit %d %s", code, errs)
	}
	d := startDaemon(t, "--data", data)
	if _, errs, code = runBinary(t, nil, "import", "--data", data, f); code != exitFailed || !strings.Contains(errs, "locked by a running tsd") {
		t.Errorf("locked store: exit %d %s", code, errs)
	}
	d.Stop(t)
}

// TestExportFormats checks the bytes of the three formats.
func TestExportFormats(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	dir := t.TempDir()
	f := filepath.Join(dir, "in.txt")
	os.WriteFile(f, []byte("sys.cpu 1356998400 42 host=web01\nsys.cpu 1356998401500 1.5 host=web01\nup 1356998400 0.1\n"), 0o644)
	data := filepath.Join(dir, "data")
	if out, errs, code := runBinary(t, nil, "import", "--data", data, f); code != exitOK {
		t.Fatalf("import: %d %s%s", code, out, errs)
	}
	for _, c := range []struct{ format, want string }{
		{"opentsdb", "sys.cpu 1356998400 42 host=web01\nsys.cpu 1356998401500 1.5 host=web01\nup 1356998400 0.1\n"},
		{"prometheus", "# TYPE \"sys.cpu\" untyped\n{\"sys.cpu\",host=\"web01\"} 42 1356998400000\n{\"sys.cpu\",host=\"web01\"} 1.5 1356998401500\n# TYPE up untyped\nup 0.1 1356998400000\n"},
		{"influx", "sys.cpu,host=web01 value=42i 1356998400000000000\nsys.cpu,host=web01 value=1.5 1356998401500000000\nup value=0.1 1356998400000000000\n"},
	} {
		out, errs, code := runBinary(t, nil, "export", "--data", data, "--format="+c.format, "1356998400", "1356998500")
		if code != exitOK || out != c.want {
			t.Errorf("%s: exit %d\n%s\nwant\n%s\n%s", c.format, code, out, c.want, errs)
		}
		if !strings.Contains(errs, "exported 3 points of 2 series in 2 metrics") {
			t.Errorf("%s: summary %q", c.format, errs)
		}
	}
	if _, _, code := runBinary(t, nil, "export", "--data", data, "--format=csv", "1356998400"); code != exitUsage {
		t.Errorf("--format=csv: exit %d", code)
	}
	out, _, code := runBinary(t, nil, "export", "--data", data, "1356998400", "1356998500", "sys.cpu{host=web02}")
	if code != exitOK || out != "" {
		t.Errorf("filter host=web02: exit %d %q", code, out)
	}
}

// TestImportExportAccessControl: with access control on, import sends the
// credentials it is given (Basic and bearer over HTTP, auth basic over
// telnet), export too, and without them the daemon's refusal fails the
// import (exit 1) naming it.
func TestImportExportAccessControl(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	dir := t.TempDir()
	users := filepath.Join(dir, "users.yaml")
	writeFileAtomic(t, users, usersYAML(t, authUsers...))
	d := startDaemon(t, "--data", filepath.Join(dir, "data"), "--tsd.auth.config", users)
	day := genDay(t, 3, 4, 600)
	day = day[bytes.Index(day, []byte("\nsys."))+1:] // names telnet can carry
	f := filepath.Join(dir, "in.txt")
	os.WriteFile(f, day, 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"http without credentials", []string{"--url", "http://" + d.Addr}, exitFailed, "401"},
		{"http reader", []string{"--url", "http://" + d.Addr, "--user", "reader", "--password", "r-pass"}, exitFailed, "403"},
		{"http basic", []string{"--url", "http://" + d.Addr, "--user", "writer", "--password", "w-pass"}, exitOK, ""},
		{"http token", []string{"--url", "http://" + d.Addr, "--token", "w-token"}, exitOK, ""},
		{"telnet bad password", []string{"--url", "tcp://" + d.Addr, "--user", "writer", "--password", "nope"}, exitFailed, "auth refused"},
		{"telnet basic", []string{"--url", "tcp://" + d.Addr, "--user", "writer", "--password", "w-pass"}, exitOK, ""},
	} {
		out, errs, code := runBinary(t, nil, append(append([]string{"import"}, c.args...), f)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%s: exit %d, want %d with %q\n%s%s", c.name, code, c.code, c.msg, out, errs)
		}
	}
	if _, errs, code := runBinary(t, nil, "export", "--url", "http://"+d.Addr, "1356998400", "1357084799"); code != exitFailed || !strings.Contains(errs, "401") {
		t.Errorf("export without credentials: exit %d %s", code, errs)
	}
	exp, errs, code := runBinary(t, nil, "export", "--url", "http://"+d.Addr, "--user", "reader", "--password", "r-pass", "1356998400", "1357084799")
	if code != exitOK {
		t.Fatalf("export as reader: exit %d %s", code, errs)
	}
	sameImportPoints(t, "access control", points(t, []byte(exp)), points(t, day))
}

// TestImportThrottled: a daemon whose head holds almost nothing throttles
// the import (503 with Retry-After, telnet's throttle line); tsd import
// sends the throttled batches again and every point lands.
func TestImportThrottled(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	day := genDay(t, 5, 8, 30)
	day = day[bytes.Index(day, []byte("\nsys."))+1:]
	f := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(f, day, 0o644)
	for _, proto := range []string{"http", "tcp"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			d := startDaemon(t, "--data", t.TempDir(), "--tsd.storage.head.max_memory=64KiB")
			out, errs, code := runBinary(t, nil, "import", "--url", proto+"://"+d.Addr, "--batch", "2000", f)
			if code != exitOK {
				t.Fatalf("import: exit %d\n%s%s", code, out, errs)
			}
			exp, errs, code := runBinary(t, nil, "export", "--url", "http://"+d.Addr, "1356998400", "1357084799")
			if code != exitOK {
				t.Fatalf("export: exit %d %s", code, errs)
			}
			sameImportPoints(t, proto, points(t, []byte(exp)), points(t, day))
			_, metrics := d.Get(t, "/metrics")
			throttled := 0.0
			for _, l := range strings.Split(metrics, "\n") {
				if strings.HasPrefix(l, "tsd_ingest_throttled_total") {
					var v float64
					fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v)
					throttled += v
				}
			}
			if throttled == 0 {
				t.Errorf("the daemon throttled nothing: the test did not test retries")
			}
			t.Logf("%.0f points throttled and sent again", throttled)
		})
	}
}
