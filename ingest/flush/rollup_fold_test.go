package flush

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// TestRollupSoleWriterDayFold flushes an hour at a time with a sole
// writer, so a day's cell is folded from its cached fold and the hour
// appended, with now and then a late point that rewrites an earlier hour
// (the fold from every hour again). Each day cell must be exactly, bit
// for bit, FoldCells of the day's stored hour cells, and each hour the
// fold of its points.
//
// It runs with the tables behind test hooks (storage.ApplyGroup writes one
// Apply per table) and bare (the batch's raw columns and cells in one
// pebble commit).
func TestRollupSoleWriterDayFold(t *testing.T) {
	for _, bare := range []bool{false, true} {
		name := "hooked"
		if bare {
			name = "one-commit"
		}
		t.Run(name, func(t *testing.T) { testRollupSoleWriterDayFold(t, bare) })
	}
}

func testRollupSoleWriterDayFold(t *testing.T, bare bool) {
	seed := *rollupSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-ingest.rollup.seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 19))
	r := newRollupRig(t)
	r.ro.SoleWriter = true
	var p *pipeline
	if bare {
		for i, h := range r.hooks {
			if h != nil {
				r.ro.Tables[i] = h.Table
			}
		}
		p = newBarePipeline(t, r.fs, r.s, r.ro, &r.clock)
	} else {
		p = r.pipeline(t, schema.FormatDense)
	}
	defer p.h.Close()
	keys := ingesttest.Keys(3)
	m := ingesttest.Model{}
	add := func(key []byte, pt series.Point) {
		p.commit(key, pt)
		m.Add(key, pt)
	}
	const hours = 40 // across a day boundary
	for h := range int64(hours) {
		for _, key := range keys {
			for range 1 + rng.IntN(20) {
				tm := t0 + h*hour + rng.Int64N(hour/1000)*1000
				if rng.IntN(6) == 0 { // on the hour: a cell's first point
					tm = t0 + h*hour
				}
				pt := ingesttest.RandomPoint(rng, tm)
				if rng.IntN(3) == 0 { // sums whose float order shows
					pt = series.Float64Point(tm, rng.NormFloat64()*1e15)
				}
				add(key, pt)
			}
			if h > 2 && rng.IntN(10) == 0 { // late: an earlier hour again
				tm := t0 + (h-1-rng.Int64N(2))*hour + rng.Int64N(hour/1000)*1000
				add(key, ingesttest.RandomPoint(rng, tm))
			}
		}
		p.clock = t0 + (h+1)*hour + 2*time.Minute.Milliseconds()
		p.flush(false)
	}
	p.clock += 2 * hour
	p.flush(true)
	w := p.f.roll
	if w.foldAppends == 0 {
		t.Fatal("no day cell was folded from a cached fold: the test does not test it")
	}
	if bare && w.grouped == 0 {
		t.Fatal("no batch wrote its raw columns with its cells through ApplyGroup")
	}
	hourIv, dayIv := &w.cfg.Intervals[1], &w.cfg.Intervals[2]
	for _, key := range keys {
		for b := int64(t0); b < t0+hours*hour; b += hour {
			want := rollup.Fold(nil, hourIv, hourIv.BaseTime(b/1000), m.Points(string(key), b, b+hour))
			var got []rollup.Cell
			for _, c := range storedCells(t, w, 1, key, b) {
				if c.T == b {
					got = append(got, c)
				}
			}
			if !cellsClose(got, want) {
				t.Fatalf("hour %d of %x: %s", (b-t0)/hour, key, cellDiff(got, want))
			}
			knownFirst(t, schema.FormatDense, got)
		}
		for day := dayIv.BaseTime(t0 / 1000); day*1000 < t0+hours*hour; day += 86400 {
			want := rollup.FoldCells(nil, dayIv, dayIv.BaseTime(day), storedCells(t, w, 1, key, day*1000))
			var got []rollup.Cell
			for _, c := range storedCells(t, w, 2, key, day*1000) {
				if c.T == day*1000 {
					got = append(got, c)
				}
			}
			if len(got) != len(want) || (len(got) == 1 && got[0] != want[0]) {
				t.Fatalf("day %d of %x: %+v, want %+v", day, key, got, want)
			}
			// The day's first point is the raw point at its start.
			direct := rollup.Fold(nil, dayIv, day, m.Points(string(key), day*1000, dayIv.NextBase(day)*1000))
			if len(got) == 1 && (got[0].Edge != direct[0].Edge || got[0].First != direct[0].First) {
				t.Fatalf("day %d of %x: first point %d %+v, want %d %+v", day, key, got[0].Edge, got[0].First, direct[0].Edge, direct[0].First)
			}
		}
	}
	t.Logf("%d day cells folded from a cached fold, %d batches' raw columns with their cells; stats %+v", w.foldAppends, w.grouped, p.f.RollupStats())
}

// newBarePipeline is newRollupPipeline (dense) with the flusher on the
// store's data table itself, not behind a hook.
func newBarePipeline(t *testing.T, fs vfs.FS, s *ingesttest.Store, ro *RollupOptions, clock *int64) *pipeline {
	t.Helper()
	p := &pipeline{t: t, fs: fs, s: s, data: &ingesttest.HookTable{Table: s.Tbl}, clock: *clock}
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(p.clock) }
	h, err := head.OpenHead(fs, "wal", opts)
	if err != nil {
		t.Fatal(err)
	}
	p.h = h
	p.f, err = NewFlusher(h, &FlushOptions{
		Table: s.Tbl, Meta: s.Meta, Format: schema.FormatDense, WriterID: 9,
		Grace: time.Minute, Spread: -1, RowsPerSecond: -1, Rollups: ro,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRollupDayLeftToLastRow: a sole writer flushing hours of a day whose
// later hours the head still holds writes their 1h cells but leaves the
// day's cell to the flush of the day's last head row, then writes it once,
// exact; a series that stops mid-day gets its cell with its last row.
func TestRollupDayLeftToLastRow(t *testing.T) {
	r := newRollupRig(t)
	r.ro.SoleWriter = true
	days := &countingTable{Table: r.ro.Tables[2]}
	r.ro.Tables[2] = days
	p := r.pipeline(t, schema.FormatDense)
	defer p.h.Close()
	keys := ingesttest.Keys(2)
	m := ingesttest.Model{}
	const hours = 30 // day 0 whole, day 1 to 06:00
	for h := range int64(hours) {
		for i, key := range keys {
			if i == 1 && h >= 5 && h < 24 {
				continue // stops at 05:00, back the next day
			}
			for k := range int64(3) {
				pt := series.IntPoint(t0+h*hour+k*600_000, h*10+k)
				p.commit(key, pt)
				m.Add(key, pt)
			}
		}
	}
	w := p.f.roll
	dayWrites := days.rows.Load
	p.clock = t0 + 10*hour + 2*time.Minute.Milliseconds() // hours 0..9 due
	p.flush(false)
	if got := storedCells(t, w, 2, keys[0], t0); len(got) != 0 {
		t.Fatalf("day 0 of a series the head holds hours 10..23 of: cell %+v written", got)
	}
	checkHeldDays(t, p, m, keys, t0, t0+hours*hour, 0) // series 1's day 0 is whole
	if n := dayWrites(); n != 1 {
		t.Fatalf("%d writes to the 1d table, want 1 (series 1 stopped at 05:00)", n)
	}
	p.clock = t0 + (hours+1)*hour
	p.flush(true)
	checkRollups(t, w, m, keys, t0, t0+hours*hour)
	// Series 0's day 0 and day 1, series 1's day 1.
	if n := dayWrites(); n != 4 {
		t.Fatalf("%d writes to the 1d table, want 4: one per series and day", n)
	}
}

// countingTable counts the row mutations applied to its table.
type countingTable struct {
	storage.Table
	rows atomic.Int64
}

func (t *countingTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	t.rows.Add(int64(len(muts)))
	return t.Table.Apply(ctx, muts)
}
