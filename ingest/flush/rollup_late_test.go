package flush

import (
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// TestRollupLatePoint: a point for an hour already flushed updates its
// cell (read back with the row's first column), then compaction keeps it.
func TestRollupLatePoint(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			r := newRollupRig(t)
			p := r.pipeline(t, format)
			defer p.h.Close()
			key := ingesttest.Keys(1)[0]
			p.commit(key, series.IntPoint(t0+1000, 5), series.IntPoint(t0+2000, 7))
			p.clock = t0 + 2*hour
			p.flush(false)
			check := func(count, sum int64) {
				t.Helper()
				for ivi := 1; ivi <= 2; ivi++ {
					got := storedCells(t, p.f.roll, ivi, key, t0)
					if len(got) != 1 || got[0].Count != count || got[0].Sum != series.IntPoint(t0, sum) {
						t.Fatalf("%s: %+v, want count %d sum %d", r.ro.Config.Intervals[ivi].Name, got, count, sum)
					}
				}
			}
			check(2, 12)
			p.commit(key, series.IntPoint(t0+3000, 100), series.IntPoint(t0+1000, 6)) // late, and a rewrite
			p.clock += 2 * hour
			p.flush(false)
			check(3, 113)
			p.compact(false)
			check(3, 113)
			if st := p.f.RollupStats(); st.SourceReads == 0 {
				t.Errorf("stats %+v", st)
			}
			_ = rollup.Sum
		})
	}
}

// TestRollupBatchSameSeries: one batch holding several late hours of one
// series (a full flush) updates each hour's cell.
func TestRollupBatchSameSeries(t *testing.T) {
	p := newRollupRig(t).pipeline(t, schema.FormatDense)
	defer p.h.Close()
	key := ingesttest.Keys(1)[0]
	for h := range int64(3) {
		p.commit(key, series.IntPoint(t0+h*hour+1000, 1))
	}
	p.clock = t0 + 5*hour
	p.flush(false)
	for h := range int64(3) {
		p.commit(key, series.IntPoint(t0+h*hour+2000, 10))
	}
	p.flush(true)
	got := storedCells(t, p.f.roll, 1, key, t0)
	if len(got) != 3 {
		t.Fatalf("%+v", got)
	}
	for _, c := range got {
		if c.Count != 2 || c.Sum.Int() != 11 {
			t.Errorf("cell %+v", c)
		}
	}
}

// TestRollupTwoWriters: two flushers (two daemons) write points of the
// same series and hours into one store at once; their rollup rewrites
// race on the packed rows, and the cells still end as the fold of every
// point (a conflict re-reads the raw row, which holds the other writer's
// column).
func TestRollupTwoWriters(t *testing.T) {
	r := newRollupRig(t)
	r.clock = t0 + 3*hour
	pa := r.pipeline(t, schema.FormatDense)
	defer pa.h.Close()
	pb := newRollupPipelineDir(t, r.fs, r.s, r.ro, schema.FormatDense, &r.clock, "wal-b", 10)
	defer pb.h.Close()
	keys := ingesttest.Keys(4)
	m := ingesttest.Model{}
	for round := range 6 {
		for w, p := range []*pipeline{pa, pb} {
			for _, key := range keys {
				for h := range int64(3) {
					tm := t0 + h*hour + int64(round*200+w)*1000 // A even, B odd seconds
					pt := series.IntPoint(tm, int64(round*10+w+1))
					p.commit(key, pt)
					m.Add(key, pt)
				}
			}
		}
		done := make(chan error, 2)
		for _, p := range []*pipeline{pa, pb} {
			go func() {
				_, err := p.f.Flush(t.Context(), time.UnixMilli(p.clock), true)
				done <- err
			}()
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	checkRollups(t, pa.f.roll, m, keys, t0, t0+3*hour)
	st := pa.f.RollupStats()
	stb := pb.f.RollupStats()
	t.Logf("A %+v, B %+v", st, stb)
}
