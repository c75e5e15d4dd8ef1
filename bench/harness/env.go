package harness

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// Size is how much work a run of every figure does.
type Size struct {
	// Name labels the size in the table's caption.
	Name string
	// Hosts and Span size the devops dataset of the append, bytes and
	// query figures.
	Hosts int
	Span  time.Duration
	// Runs is how many times each side of a figure is measured.
	Runs int
	// PutCells is the cells written per run of the put figures.
	PutCells int
	// ReadRows is the rows preloaded for the read figures; Reads the reads
	// per run.
	ReadRows, Reads int
	// QueryRepeats is how many executions of a query one run times (their
	// median is the run's value).
	QueryRepeats int
	// ParsePoints is the points parsed per run of the parser figures.
	ParsePoints int
	// HighCardHosts is the series count of the high-cardinality metric of
	// the planner figure (one hour of points each).
	HighCardHosts int
}

// Default is the documented size: the full devops day, five runs, a few
// minutes on two cores.
var Default = Size{
	Name: "default", Hosts: 100, Span: 24 * time.Hour, Runs: 5,
	PutCells: 200_000, ReadRows: 1000, Reads: 2000, QueryRepeats: 5,
	ParsePoints: 1_000_000, HighCardHosts: 100_000,
}

// Smoke is a size for CI: seconds, one run, every row filled or n/a.
var Smoke = Size{
	Name: "smoke", Hosts: 2, Span: 12 * time.Hour, Runs: 1,
	PutCells: 3000, ReadRows: 20, Reads: 50, QueryRepeats: 1,
	ParsePoints: 5000, HighCardHosts: 2000,
}

// Env is the shared context of one table's measurements.
type Env struct {
	// Size is the work per run.
	Size Size
	// Dir is a scratch directory the harness owns and removes on Close.
	Dir string
	// OpenStore opens tsd's storage engine in a directory; nil makes the
	// storage figures print "n/a".
	OpenStore func(dir string) (storage.DB, error)
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Clock times the CPU-bound figures. Default ClockCPU (NewEnv).
	Clock Clock
	// RowCacheBytes is the query readers' decoded-row cache
	// (read.Options.RowCacheBytes): 0 the reader's default, -1 off, for
	// cold-decode figures.
	RowCacheBytes int64

	cache   map[string]any
	closers []func() error
	seq     int
}

// NewEnv returns an Env with a fresh scratch directory under parent ("" for
// the system temp directory).
func NewEnv(size Size, parent string) (*Env, error) {
	dir, err := os.MkdirTemp(parent, "tsdbench-")
	if err != nil {
		return nil, fmt.Errorf("bench scratch dir: %w", err)
	}
	return &Env{Size: size, Dir: dir, Clock: ClockCPU, cache: map[string]any{}}, nil
}

// TempDir returns a new empty directory under Dir.
func (e *Env) TempDir(prefix string) (string, error) {
	e.seq++
	return os.MkdirTemp(e.Dir, fmt.Sprintf("%s-%d-", prefix, e.seq))
}

// Cached returns the value build made for key, building it on first use.
// A failed build is not cached.
func Cached[T any](e *Env, key string, build func() (T, error)) (T, error) {
	if v, ok := e.cache[key]; ok {
		return v.(T), nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	e.cache[key] = v
	return v, nil
}

// OnClose registers f to run at Close, in reverse order.
func (e *Env) OnClose(f func() error) { e.closers = append(e.closers, f) }

// Logf writes a progress line.
func (e *Env) Logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// Close runs the registered closers and removes Dir.
func (e *Env) Close() error {
	var first error
	for i := len(e.closers) - 1; i >= 0; i-- {
		if err := e.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	e.closers = nil
	if err := os.RemoveAll(e.Dir); err != nil && first == nil {
		first = err
	}
	return first
}
