package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// Options tune the suite; the zero value is a fast run suitable for CI.
type Options struct {
	// ModelSteps is how many random operations the model-based test runs.
	// Default 2000.
	ModelSteps int
	// ModelSeed seeds the model-based test. Default: time-based, logged so
	// a failure can be replayed.
	ModelSeed int64
	// SkipSlow skips tests that sleep, such as a cell expiring while the
	// test waits (for engines with lazy clocks). Default false.
	SkipSlow bool
	// Goroutines is how many goroutines the concurrency tests start;
	// CheckAndPut races use twice as many. Default 8.
	Goroutines int
	// OpsPerGoroutine is how many increments or appends each goroutine of
	// a concurrency test issues. Default 200.
	OpsPerGoroutine int
	// Now reads the engine's clock, which stamps cells written with a zero
	// timestamp and measures TTL. Default time.Now.
	Now func() time.Time
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	if o.ModelSteps <= 0 {
		o.ModelSteps = 2000
	}
	if o.ModelSeed == 0 {
		o.ModelSeed = time.Now().UnixNano()
	}
	if o.Goroutines <= 0 {
		o.Goroutines = 8
	}
	if o.OpsPerGoroutine <= 0 {
		o.OpsPerGoroutine = 200
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate rejects negative counts.
func (o Options) Validate() error {
	if o.ModelSteps < 0 || o.Goroutines < 0 || o.OpsPerGoroutine < 0 {
		return fmt.Errorf("storagetest: negative ModelSteps, Goroutines or OpsPerGoroutine in %+v", o)
	}
	return nil
}

// Run runs every conformance test as subtests. open returns a fresh, empty
// DB and registers its own t.Cleanup to close it; that cleanup must accept a
// DB the suite has already closed.
func Run(t *testing.T, open func(t testing.TB) storage.DB, opts Options) {
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	opts = opts.EnsureDefaults()
	s := &suite{open: open, opts: opts}
	for _, g := range s.groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, c.fn)
			}
		})
	}
}

// suite carries what every subtest needs.
type suite struct {
	open func(t testing.TB) storage.DB
	opts Options
}

// testCase is one named subtest.
type testCase struct {
	name string
	fn   func(t *testing.T)
}

// group is a named set of subtests.
type group struct {
	name  string
	cases []testCase
}

func (s *suite) groups() []group {
	return []group{
		{"Tables", s.tableCases()},
		{"PutGet", s.putGetCases()},
		{"GetAppend", s.getAppendCases()},
		{"TTL", s.ttlCases()},
		{"Delete", s.deleteCases()},
		{"Apply", s.applyCases()},
		{"Scan", s.scanCases()},
		{"Increment", s.incrementCases()},
		{"CheckAndPut", s.checkAndPutCases()},
		{"Append", s.appendCases()},
		{"Lifecycle", s.lifecycleCases()},
		{"Model", s.modelCases()},
	}
}
