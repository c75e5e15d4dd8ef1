package flush

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// deleteCounter is a real table that counts the column deletions written
// to it: blind ones (every version: a Pebble range tombstone) and exact
// ones (one version: a point tombstone).
type deleteCounter struct {
	storage.Table
	blind, exact atomic.Int64
}

func (t *deleteCounter) Apply(ctx context.Context, muts []storage.Mutation) error {
	for _, m := range muts {
		for _, d := range m.Deletes {
			switch {
			case d.Kind != storage.DeleteColumn:
			case d.MaxTime == 0:
				t.blind.Add(1)
			default:
				t.exact.Add(1)
			}
		}
	}
	return t.Table.Apply(ctx, muts)
}

// writeOpenTSDBRollups flushes hours of rows series in the opentsdb
// format with rollups on (sole writer or not), each hour's values of a
// new width where it can (so stale widths exist to delete), and returns
// the counters of the 1h and 1d tables and the pipeline.
func writeOpenTSDBRollups(t testing.TB, sole bool, series_, hours int) (*pipeline, []*deleteCounter, [][]byte, ingesttest.Model, func()) {
	r := newRollupRig(t)
	ro := r.ro
	ro.SoleWriter = sole
	counters := make([]*deleteCounter, len(ro.Tables))
	for i, tbl := range ro.Tables {
		if tbl != nil {
			counters[i] = &deleteCounter{Table: tbl}
			ro.Tables[i] = counters[i]
		}
	}
	p := r.pipeline(t, schema.FormatOpenTSDB)
	keys := ingesttest.Keys(series_)
	m := ingesttest.Model{}
	for h := range hours {
		base := t0 + int64(h)*hour
		a := p.h.Appender()
		for k, key := range keys {
			v := int64(1) << (8 * ((h + k) % 4)) // 1, 256, 65536, 2^24: widths change
			pt := series.IntPoint(base+1000, v)
			if _, err := a.AppendKey(key, pt); err != nil {
				t.Fatal(err)
			}
			m.Add(key, pt)
		}
		if err := a.Commit(false); err != nil {
			t.Fatal(err)
		}
		p.clock = base + 2*hour
		if _, err := p.f.Flush(context.Background(), time.UnixMilli(p.clock), false); err != nil {
			t.Fatal(err)
		}
	}
	return p, counters, keys, m, func() { p.h.Close() } // the rig closes the store
}

// TestRollupOpenTSDBNoBlindDeletes: a sole writer in the opentsdb format
// deletes only the stale widths that exist, not every other width of
// every cell (a range tombstone each in Pebble, ~23 per cell); the cells
// stay exact and no stale width survives. With other writers the deletes
// stay blind.
func TestRollupOpenTSDBNoBlindDeletes(t *testing.T) {
	var soleBlind int64
	for _, sole := range []bool{true, false} {
		p, counters, keys, m, done := writeOpenTSDBRollups(t, sole, 3, 30)
		blind := counters[1].blind.Load() + counters[2].blind.Load()
		exact := counters[1].exact.Load() + counters[2].exact.Load()
		t.Logf("sole %v: %d blind column deletes, %d exact", sole, blind, exact)
		if sole {
			soleBlind = blind
		} else if blind < 20*max(soleBlind, 1) || soleBlind == 0 {
			// Widths change only in the 1d cells (their sums grow).
			t.Errorf("all-version deletes: %d by a sole writer, %d by one of several: want some, and 20 times fewer", soleBlind, blind)
		}
		checkRollups(t, p.f.roll, m, keys, t0, t0+30*hour)
		// Every stored 1h and 1d cell has one column per aggregator and
		// index (no stale width), and decodes to the fold of the points.
		for ivi := 1; ivi <= 2; ivi++ {
			iv := &p.f.roll.cfg.Intervals[ivi]
			for _, key := range keys {
				for base := iv.BaseTime(t0 / 1000); base*1000 < t0+30*hour; base = iv.NextBase(base) {
					row, err := p.f.roll.opts.Layout.AppendRowKeyFromTSUID(nil, key, base*1000-base*1000%hour)
					if err != nil {
						t.Fatal(err)
					}
					rollup.SetBaseTime(p.f.roll.opts.Layout, row, base)
					cells, err := p.f.roll.tables[ivi].Get(context.Background(), row, nil)
					if err != nil && !errors.Is(err, storage.ErrNotFound) {
						t.Fatal(err)
					}
					seen := map[[2]int]bool{}
					for _, c := range cells {
						q, err := rollup.ParseQualifier(c.Qualifier)
						if err != nil {
							t.Fatal(err)
						}
						k := [2]int{q.AggID, q.Index}
						if seen[k] {
							t.Fatalf("sole %v: %s row %x: two widths of aggregator %d index %d", sole, iv.Name, row, q.AggID, q.Index)
						}
						seen[k] = true
					}
				}
			}
		}
		done()
	}
}

// BenchmarkRollupReadsAfterOpenTSDBFlush: the time of one rollup row read
// after 100 series × 48 hours were flushed with rollups in the opentsdb
// format; blind deletes leave ~23 range tombstones per cell in the
// memtable, which every new iterator fragments.
func BenchmarkRollupReadsAfterOpenTSDBFlush(b *testing.B) {
	for _, sole := range []bool{true, false} {
		name := "blind"
		if sole {
			name = "sole"
		}
		b.Run(name, func(b *testing.B) {
			p, counters, keys, _, done := writeOpenTSDBRollups(b, sole, 100, 48)
			defer done()
			iv := &p.f.roll.cfg.Intervals[1]
			rows := make([][]byte, len(keys))
			for i, key := range keys {
				row, err := p.f.roll.opts.Layout.AppendRowKeyFromTSUID(nil, key, t0)
				if err != nil {
					b.Fatal(err)
				}
				rollup.SetBaseTime(p.f.roll.opts.Layout, row, iv.BaseTime(t0/1000))
				rows[i] = row
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := counters[1].Get(context.Background(), rows[i%len(rows)], nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(counters[1].blind.Load()+counters[2].blind.Load()), "blind-deletes")
		})
	}
}
