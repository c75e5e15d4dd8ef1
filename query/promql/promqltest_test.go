package promql_test

import (
	"flag"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
)

// histogramFiles are the built-in test files of Prometheus v0.310.0 that
// load native-histogram samples, which tsd does not store: each must fail
// as it is, and testdata/<name>.test, the same file with its histogram
// cases removed, must pass.
var histogramFiles = []string{
	"native_histograms", "histograms", "functions", "operators", "aggregators",
	"limit", "subquery", "range_queries", "info",
}

func isHistogramFile(name string) (string, bool) {
	base := strings.TrimSuffix(path.Base(name), ".test")
	for _, h := range histogramFiles {
		if h == base {
			return base, true
		}
	}
	return base, false
}

func newPromStorage(tb testing.TB) storage.Storage {
	return &promStorage{s: openStack(tb, stackOptions{})}
}

func newTestEngine(t testing.TB) promql.QueryEngine {
	return promqltest.NewTestEngine(t, false, 5*time.Minute, promqltest.DefaultMaxSamplesPerQuery)
}

// TestPromQLBuiltins runs every built-in PromQL test file of the pinned
// Prometheus against tsd's write and read path: the files without native
// histograms as they are, the others as their copies in testdata/. Then it
// checks, in a child process, that the originals of the others fail, and
// fail on their histograms. Queries run marked by promql.WithPushdown, as
// the HTTP API runs them.
func TestPromQLBuiltins(t *testing.T) {
	eng := pushdownEngine{newTestEngine(t)}
	seen := map[string]bool{}
	promqltest.RunBuiltinTestsWithStorage(&suite{T: t, run: func(t *testing.T, name string, f func(*testing.T)) {
		base, hist := isHistogramFile(name)
		if !hist {
			f(t)
			return
		}
		seen[base] = true
		b, err := os.ReadFile(filepath.Join("testdata", base+".test"))
		if err != nil {
			t.Fatal(err)
		}
		promqltest.RunTestWithStorage(t, string(b), eng, newPromStorage)
	}}, eng, newPromStorage)
	t.Run("expected failures", expectHistogramFailures)
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		return // a file picked by -run: the list check needs every file
	}
	for _, name := range histogramFiles {
		if !seen[name] {
			t.Errorf("%s.test is not among the built-in files any more: update histogramFiles", name)
		}
	}
	if builtinPushdowns.Load() == 0 {
		t.Error("no Select pushed a range function down")
	}
	if n := skippedSamples.Load(); n > 0 {
		t.Logf("%d samples outside tsd's time range were not stored", n)
	}
}

// suite is the runner's testing.TB, deciding how each file runs.
type suite struct {
	*testing.T
	run func(t *testing.T, name string, f func(*testing.T))
}

// Run implements promqltest.TBRun.
func (s *suite) Run(name string, f func(*testing.T)) bool {
	return s.T.Run(name, func(t *testing.T) { s.run(t, name, f) })
}

const childEnv = "TSD_PROMQL_HISTOGRAM_FILES"

// TestHistogramFilesFail runs the original histogram files; only as the
// child process of TestPromQLBuiltins, which expects it to fail.
func TestHistogramFilesFail(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs as TestPromQLBuiltins' child process")
	}
	promqltest.RunBuiltinTestsWithStorage(&suite{T: t, run: func(t *testing.T, name string, f func(*testing.T)) {
		if _, hist := isHistogramFile(name); hist {
			f(t)
		}
	}}, newTestEngine(t), newPromStorage)
}

// expectHistogramFailures re-runs this test binary on TestHistogramFilesFail
// and requires every histogram file to fail, and the histogram append
// error to be reported.
func expectHistogramFailures(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHistogramFilesFail$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the original histogram files all pass:\n%s", out)
	}
	for _, name := range histogramFiles {
		re := regexp.MustCompile(`--- FAIL: TestHistogramFilesFail/testdata/` + name + `\.test `)
		if !re.Match(out) {
			t.Errorf("%s.test does not fail as it is: take it off histogramFiles", name)
		}
	}
	if n := strings.Count(string(out), errNoHistograms.Error()); n < len(histogramFiles) {
		t.Errorf("%d histogram append errors reported, want one per file (%d):\n%s", n, len(histogramFiles), out)
	}
}
