package flush

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

const hour int64 = rowkey.RowSpanMs

var rollupSeed = flag.Uint64("ingest.rollup.seed", 0, "seed of TestRollupModel (0: from the clock); the test logs the one it used")

// rollupStore adds the default configuration's rollup tables to s and
// returns the options that write them, each table behind a HookTable.
func rollupStore(t testing.TB, s *ingesttest.Store) (*RollupOptions, []*ingesttest.HookTable) {
	t.Helper()
	o := rollupTables(t, s, rollup.DefaultConfig())
	hooks := make([]*ingesttest.HookTable, len(o.Tables))
	for i, tbl := range o.Tables {
		if tbl != nil {
			hooks[i] = &ingesttest.HookTable{Table: tbl}
			o.Tables[i] = hooks[i]
		}
	}
	return o, hooks
}

// rollupRig is the rollup tests' common start: a store with the default
// rollup tables (rollupStore), closed when the test ends, and the clock
// its pipelines start at (t0 unless the test sets another).
type rollupRig struct {
	fs    vfs.FS
	s     *ingesttest.Store
	ro    *RollupOptions
	hooks []*ingesttest.HookTable
	clock int64
}

// newRollupRig opens a rig on a pebble store in memory.
func newRollupRig(t testing.TB) *rollupRig {
	fs := vfs.NewMem()
	return rollupRigOn(t, fs, openStore(t, fs))
}

// rollupRigOn is newRollupRig on store s, whose files (if any) are in fs.
func rollupRigOn(t testing.TB, fs vfs.FS, s *ingesttest.Store) *rollupRig {
	t.Helper()
	t.Cleanup(func() { s.DB.Close() })
	ro, hooks := rollupStore(t, s)
	return &rollupRig{fs: fs, s: s, ro: ro, hooks: hooks, clock: t0}
}

// pipeline opens a pipeline (newPipelineAt with rollups on) writing the
// rig's tables in format, its log in "wal", its clock the rig's.
func (r *rollupRig) pipeline(t testing.TB, format schema.Format) *pipeline {
	t.Helper()
	return newRollupPipelineDir(t, r.fs, r.s, r.ro, format, &r.clock, "wal", 9)
}

// newRollupPipelineDir is newRollupPipeline with its log in dir and the
// writer id writer.
func newRollupPipelineDir(t testing.TB, fs vfs.FS, s *ingesttest.Store, ro *RollupOptions, format schema.Format, clock *int64, dir string, writer uint32) *pipeline {
	t.Helper()
	p := &pipeline{t: t, fs: fs, s: s, data: &ingesttest.HookTable{Table: s.Tbl}, clock: *clock}
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(p.clock) }
	h, err := head.OpenHead(fs, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.h = h
	p.f, err = NewFlusher(h, &FlushOptions{
		Table: p.data, Meta: s.Meta, Format: format, WriterID: writer,
		Grace: time.Minute, Spread: -1, RowsPerSecond: -1, Rollups: ro,
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.c, err = p.f.NewCompactor(&CompactOptions{RowsPerSecond: -1, BatchRows: 3}); err != nil {
		t.Fatal(err)
	}
	return p
}

// storedCells reads the cells of interval i of the series key in the row
// holding ms.
func storedCells(t testing.TB, w *rollupWriter, i int, key []byte, ms int64) []rollup.Cell {
	t.Helper()
	iv := &w.cfg.Intervals[i]
	base := iv.BaseTime(ms / 1000)
	row, err := w.opts.Layout.AppendRowKeyFromTSUID(nil, key, base*1000-base*1000%rowkey.RowSpanMs)
	if err != nil {
		t.Fatal(err)
	}
	rollup.SetBaseTime(w.opts.Layout, row, base)
	cells, err := w.tables[i].Get(context.Background(), row, nil)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatal(err)
	}
	var st RollupStats
	got := w.decodeRow(nil, iv, base, cells, &st)
	if st.BadCells != 0 {
		t.Fatalf("%s row %x: bad cells", iv.Name, row)
	}
	return got
}

// checkRollups compares every stored cell of the 1h and 1d intervals with
// the fold of the model's points.
func checkRollups(t testing.TB, w *rollupWriter, m ingesttest.Model, keys [][]byte, from, to int64) {
	t.Helper()
	for ivi := 1; ivi <= 2; ivi++ {
		iv := &w.cfg.Intervals[ivi]
		for _, key := range keys {
			for base := iv.BaseTime(from / 1000); base*1000 < to; base = iv.NextBase(base) {
				pts := m.Points(string(key), base*1000, iv.NextBase(base)*1000)
				want := rollup.Fold(nil, iv, base, pts)
				got := storedCells(t, w, ivi, key, base*1000)
				if !cellsClose(got, want) {
					t.Fatalf("%s row of %x at %d: %s", iv.Name, key, base, cellDiff(got, want))
				}
			}
		}
	}
}

// cellsClose compares cells exactly, but float sums within 1e-9
// relative (a day's sum adds hour sums, not points, in order). A first
// point a knows must be b's; an unknown one (an OpenTSDB column) passes
// here, and knownFirst says where it must not.
func cellsClose(a, b []rollup.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.T != y.T || x.Count != y.Count || x.Min.Float() != y.Min.Float() || x.Max.Float() != y.Max.Float() {
			return false
		}
		if x.Edge != rollup.EdgeUnknown && (x.Edge != y.Edge || x.First != y.First) {
			return false
		}
		if x.Sum.Kind != y.Sum.Kind && (x.Sum.Kind == series.Int || y.Sum.Kind == series.Int) {
			return false
		}
		if d := math.Abs(x.Sum.Float() - y.Sum.Float()); d > 1e-9*math.Max(1, math.Abs(y.Sum.Float())) {
			return false
		}
	}
	return true
}

// TestRollupModel writes random points, late by up to a day, out of
// order and duplicated, across restarts (the head replaying its log),
// failed rollup writes and compactions, in both formats, and checks that
// every 1h and 1d cell equals the fold of the raw points.
func TestRollupModel(t *testing.T) {
	runRollupModel(t, func(t *testing.T, fs vfs.FS) *ingesttest.Store { return openStore(t, fs) }, modelRounds())
}

// modelRounds is the number of write-flush-check rounds of the rollup
// model: 40, or 12 under the race detector, where Pebble's invariant
// checks and the detector made the package take 10 minutes on a loaded
// 2-core machine and time out in CI. The rounds are sequential, so the
// race run loses cases, not concurrency.
func modelRounds() int {
	if invariants.RaceEnabled {
		return 12
	}
	return 40
}

// runRollupModel is TestRollupModel on the stores open makes.
func runRollupModel(t *testing.T, open func(*testing.T, vfs.FS) *ingesttest.Store, rounds int) {
	seed := *rollupSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-ingest.rollup.seed)", seed)
	for _, tc := range []struct {
		format schema.Format
		sole   bool
		cache  int
	}{
		{format: schema.FormatDense},
		{format: schema.FormatOpenTSDB},
		{format: schema.FormatOpenTSDB, sole: true}, // stale widths deleted where read
		{format: schema.FormatDense, sole: true},
		{format: schema.FormatDense, sole: true, cache: 2}, // rows evicted and read again
	} {
		format := tc.format
		name := format.String()
		if tc.sole {
			name += "-sole"
		}
		if tc.cache != 0 {
			name += fmt.Sprintf("-cache%d", tc.cache)
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(format)))
			fs := vfs.NewMem()
			r := rollupRigOn(t, fs, open(t, fs))
			ro, hooks := r.ro, r.hooks
			ro.SoleWriter, ro.CacheRows = tc.sole, tc.cache
			r.clock = t0 - 2*hour
			from, to := t0-3*hour, t0+30*hour // across a day and a month boundary
			p := r.pipeline(t, format)
			m := ingesttest.Model{}
			keys := ingesttest.Keys(3)
			for round := range rounds {
				p.clock += int64(rng.IntN(3)+1) * hour / 2
				r.clock = p.clock
				a := p.h.Appender()
				for range rng.IntN(400) {
					key := keys[rng.IntN(len(keys))]
					hi := min(p.clock, to)
					tm := hi - rng.Int64N(min(hi-from, 26*hour)) // up to a day late
					tm -= tm % 1000
					if rng.IntN(8) == 0 { // on the hour: a cell's first point, rewritten
						tm -= tm % hour
					}
					pt := ingesttest.RandomPoint(rng, tm)
					if _, err := a.AppendKey(key, pt); err != nil {
						t.Fatal(err)
					}
					m.Add(key, pt)
				}
				if err := a.Commit(false); err != nil {
					t.Fatal(err)
				}
				fail := rng.IntN(6) == 0
				hooks[1+rng.IntN(2)].SetFail(fail)
				if _, err := p.f.Flush(context.Background(), time.UnixMilli(p.clock), false); err != nil && !fail {
					t.Fatalf("round %d: %v", round, err)
				}
				hooks[1].SetFail(false)
				hooks[2].SetFail(false)
				if rng.IntN(3) == 0 {
					p.compact(false)
				}
				{ // every hour the head no longer holds is exact already
					iv := &p.f.roll.cfg.Intervals[1]
					for _, key := range keys {
						for b := from - from%hour; b < min(p.clock, to); b += hour {
							if len(p.h.AppendPoints(nil, key, b, b+hour)) > 0 {
								continue
							}
							want := rollup.Fold(nil, iv, iv.BaseTime(b/1000), m.Points(string(key), b, b+hour))
							var got []rollup.Cell
							for _, c := range storedCells(t, p.f.roll, 1, key, b) {
								if c.T == b {
									got = append(got, c)
								}
							}
							if !cellsClose(got, want) {
								t.Fatalf("round %d (clock %d, fail %v): hour %d of %x: %s", round, (p.clock-t0)/hour, fail, (b-t0)/hour, key, cellDiff(got, want))
							}
							knownFirst(t, format, got)
						}
					}
					checkHeldDays(t, p, m, keys, from, to, round)
				}
				if rng.IntN(8) == 0 { // restart without flushing: the log replays
					p.c.Stop()
					if err := p.h.Close(); err != nil {
						t.Fatal(err)
					}
					p = r.pipeline(t, format)
				}
			}
			p.clock = max(p.clock, to+2*hour)
			p.flush(true)
			checkRollups(t, p.f.roll, m, keys, from, to) // before compaction
			p.compact(true)
			defer p.h.Close()
			for _, key := range keys {
				for b := from - from%hour; b < to; b += hour {
					got, _ := r.s.Points(t, key, b)
					if want := m.Points(string(key), b, b+hour); len(got) != len(want) {
						t.Errorf("raw row %x at %d: %d points, want %d", key, b, len(got), len(want))
					}
				}
			}
			checkRollups(t, p.f.roll, m, keys, from, to)
			if tc.sole && format == schema.FormatDense { // packed rows: dense only
				checkPacked(t, p.f.roll, keys, from, to)
			}
			st := p.f.RollupStats()
			t.Logf("rollup stats %+v", st)
			if st.Rows == 0 || st.SourceReads == 0 {
				t.Errorf("stats %+v: no rows or no late rows read back", st)
			}
		})
	}
}

// checkHeldDays checks every 1d cell of keys in [from, to) whose day
// the head holds no row of: a sole writer leaves a day's cell to the
// flush of its last head row (heldRanges), so it is exact once the head
// holds none, as readers assume.
func checkHeldDays(t testing.TB, p *pipeline, m ingesttest.Model, keys [][]byte, from, to int64, round int) {
	t.Helper()
	iv := &p.f.roll.cfg.Intervals[2]
	for _, key := range keys {
		for day := iv.BaseTime(from / 1000); day*1000 < to; day = iv.NextBase(day) {
			base, idx := iv.CellOf(day * 1000)
			lo := iv.CellStart(base, idx)
			hi := lo + iv.Seconds*1000
			if len(p.h.AppendRows(nil, key, lo, hi)) > 0 {
				continue
			}
			want := rollup.Fold(nil, iv, base, m.Points(string(key), lo, hi))
			var got []rollup.Cell
			for _, c := range storedCells(t, p.f.roll, 2, key, lo) {
				if c.T == lo {
					got = append(got, c)
				}
			}
			if !cellsClose(got, want) {
				t.Fatalf("round %d (clock %d): day at %d of %x, no head row: %s", round, (p.clock-t0)/hour, lo, key, cellDiff(got, want))
			}
		}
	}
}

// knownFirst fails t when a dense store's cell does not know its first
// point.
func knownFirst(t testing.TB, format schema.Format, cells []rollup.Cell) {
	t.Helper()
	if format != schema.FormatDense {
		return
	}
	for _, c := range cells {
		if c.Edge == rollup.EdgeUnknown {
			t.Fatalf("cell at %d: first point unknown in a dense store", c.T)
		}
	}
}

// cellDiff describes how two cell lists differ.
func cellDiff(got, want []rollup.Cell) string {
	out := fmt.Sprintf("%d cells, want %d", len(got), len(want))
	g := map[int64]rollup.Cell{}
	for _, c := range got {
		g[c.T] = c
	}
	for _, w := range want {
		c, ok := g[w.T]
		if !ok {
			out += fmt.Sprintf("\n  missing %d (count %d)", w.T, w.Count)
		} else if !cellsClose([]rollup.Cell{c}, []rollup.Cell{w}) {
			out += fmt.Sprintf("\n  at %d: %+v, want %+v", w.T, c, w)
		}
		delete(g, w.T)
	}
	for t := range g {
		out += fmt.Sprintf("\n  extra %d", t)
	}
	return out
}

// checkPacked checks that a sole writer left each 1h row of keys in
// [from, to) as cell columns (its last hour not written) or one packed
// column, never both, and packed some.
func checkPacked(t testing.TB, w *rollupWriter, keys [][]byte, from, to int64) {
	t.Helper()
	iv := &w.cfg.Intervals[1]
	rows := 0
	for _, key := range keys {
		for base := iv.BaseTime(from / 1000); base*1000 < to; base = iv.NextBase(base) {
			row, err := w.opts.Layout.AppendRowKeyFromTSUID(nil, key, base*1000)
			if err != nil {
				t.Fatal(err)
			}
			cells, err := w.tables[1].Get(context.Background(), row, nil)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				t.Fatal(err)
			}
			packed, other := 0, 0
			for _, c := range cells {
				if string(c.Qualifier) == rollup.PackedQualifier {
					packed++
				} else {
					other++
				}
			}
			if packed > 1 || (packed > 0 && other > 0) {
				t.Errorf("1h row of %x at %d: %d packed and %d other columns", key, base, packed, other)
			}
			rows += packed
		}
	}
	if rows == 0 {
		t.Errorf("no packed 1h row")
	}
}
