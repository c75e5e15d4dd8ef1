package promql_test

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
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

func newPromStorage(tb testing.TB) storage.Storage {
	return &promStorage{s: openStack(tb, stackOptions{})}
}

// TestPromQLBuiltins runs every built-in PromQL test file of the pinned
// Prometheus against tsd's write and read path.
func TestPromQLBuiltins(t *testing.T) {
	eng := promqltest.NewTestEngine(t, false, 5*time.Minute, promqltest.DefaultMaxSamplesPerQuery)
	s := &suite{T: t, eng: eng, seen: map[string]bool{}}
	promqltest.RunBuiltinTestsWithStorage(s, eng, newPromStorage)
	for _, name := range histogramFiles {
		if !s.seen[name] {
			t.Errorf("%s.test is not among the built-in files any more: update histogramFiles", name)
		}
	}
	if skippedSamples.Load() > 0 {
		t.Logf("%d samples outside tsd's time range were not stored", skippedSamples.Load())
	}
}

// suite is the runner's testing.TB: it runs the files that load native
// histograms as expected failures and their stripped copies instead.
type suite struct {
	*testing.T
	eng  promql.QueryEngine
	seen map[string]bool

	once   sync.Once
	srcDir string
	srcErr error
}

// Run implements promqltest.TBRun.
func (s *suite) Run(name string, f func(*testing.T)) bool {
	base := strings.TrimSuffix(path.Base(name), ".test")
	for _, h := range histogramFiles {
		if h == base {
			s.seen[base] = true
			return s.T.Run(name, func(t *testing.T) {
				t.Run("original", func(t *testing.T) { s.expectFailure(t, base) })
				t.Run("stripped", func(t *testing.T) { s.runFile(t, filepath.Join("testdata", base+".test")) })
			})
		}
	}
	return s.T.Run(name, f)
}

func (s *suite) runFile(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	promqltest.RunTestWithStorage(t, string(b), s.eng, newPromStorage)
}

// expectFailure runs the original file through a recorder and requires it
// to fail.
func (s *suite) expectFailure(t *testing.T, base string) {
	dir, err := s.builtinDir()
	if err != nil {
		t.Skipf("built-in test files not found: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, base+".test"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		promqltest.RunTestWithStorage(rec, string(b), s.eng, newPromStorage)
	}()
	<-done
	switch {
	case !rec.failed:
		t.Fatalf("%s.test passes: take it off histogramFiles", base)
	case !strings.Contains(rec.first, errNoHistograms.Error()):
		t.Fatalf("%s.test fails for another reason than histograms:\n%s", base, rec.first)
	}
}

// builtinDir finds the pinned module's test files (the runner embeds them
// but does not export them).
func (s *suite) builtinDir() (string, error) {
	s.once.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/prometheus/prometheus").Output()
		s.srcErr = err
		s.srcDir = filepath.Join(strings.TrimSpace(string(out)), "promql", "promqltest", "testdata")
	})
	return s.srcDir, s.srcErr
}

// recorder is a testing.TB that records failures instead of failing the
// test; FailNow ends the calling goroutine.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	first  string
}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failed {
		r.failed, r.first = true, msg
	}
}

func (r *recorder) Error(args ...any) { r.record(strings.TrimSpace(sprint(args...))) }
func (r *recorder) Errorf(format string, args ...any) {
	r.record(strings.TrimSpace(sprintf(format, args...)))
}
func (r *recorder) Fail()                             { r.record("failed") }
func (r *recorder) FailNow()                          { r.record("failed"); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

var (
	sprint  = fmt.Sprint
	sprintf = fmt.Sprintf
)
