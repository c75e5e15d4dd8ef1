package promql_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// TestReadIteratorModel walks read.Reader.Iterator with random Next and
// SeekTime calls over series spread over store rows, late columns and the
// head, and checks every position against the points Reader.Read returns.
func TestReadIteratorModel(t *testing.T) {
	for seed := range uint64(*refSeeds) {
		for _, f := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
			s := openStack(t, stackOptions{format: f})
			loadTSD(context.Background(), t, s, rand.New(rand.NewPCG(seed, 8)), genReference(rand.New(rand.NewPCG(seed, 7))))
			walkAll(t, s, rand.New(rand.NewPCG(seed, 5)))
		}
	}
}

func walkAll(t *testing.T, s *stack, r *rand.Rand) {
	ctx := context.Background()
	b, err := s.index.Postings(ctx, index.NameKey, nil)
	mustOK(t, err)
	for _, sr := range seriesOfBitmap(s.index, b) {
		start, end := refStart+r.Int64N(refSpan/2), refEnd-r.Int64N(refSpan/2)
		var want []series.Point
		err := s.reader.Read(ctx, read.Selection{Series: []index.Series{sr}, Start: start, End: end},
			func(_ index.Series, pts []series.Point, _ []read.Note) error {
				want = pts
				return nil
			})
		mustOK(t, err)
		checkWalk(t, r, s.reader.Iterator(ctx, sr, start, end, nil), want, start, end)
	}
}

// checkWalk drives it and a position in want with the same random calls.
func checkWalk(t *testing.T, r *rand.Rand, it series.Iterator, want []series.Point, start, end int64) {
	t.Helper()
	p := -1
	for step := 0; ; step++ {
		var ok bool
		if r.IntN(3) == 0 {
			ts := start + r.Int64N(end-start+1)/int64(1+r.IntN(3))
			ok = it.SeekTime(ts)
			if p < 0 || p >= len(want) || want[p].T < ts {
				p = max(p, 0)
				for p < len(want) && want[p].T < ts {
					p++
				}
			}
		} else {
			ok = it.Next()
			p++
		}
		if ok != (p < len(want)) {
			t.Fatalf("step %d: iterator says %v, model at %d of %d", step, ok, p, len(want))
		}
		if !ok {
			mustOK(t, it.Err())
			return
		}
		if got := it.At(); got != want[p] {
			t.Fatalf("step %d: at %+v, want %+v", step, got, want[p])
		}
	}
}

func seriesOfBitmap(ix *index.Index, b *roaring.Bitmap) []index.Series {
	var out []index.Series
	ix.ForEach(b, func(s index.Series) bool {
		out = append(out, s)
		return true
	})
	return out
}

// TestChunkIteratorModel walks the chunkenc adapter over read.Fetch's
// iterators (both plans, so rows from Gets and from a scan) with random
// Next and Seek calls, checking every sample against Reader.Read.
func TestChunkIteratorModel(t *testing.T) {
	ctx := context.Background()
	s := openStack(t, stackOptions{})
	loadTSD(ctx, t, s, rand.New(rand.NewPCG(1, 8)), genReference(rand.New(rand.NewPCG(1, 7))))
	b, err := s.index.Postings(ctx, index.NameKey, nil)
	mustOK(t, err)
	all := seriesOfBitmap(s.index, b)
	r := rand.New(rand.NewPCG(2, 5))
	for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
		start, end := refStart+r.Int64N(refSpan/2), refEnd-r.Int64N(refSpan/2)
		for i, sr := range all {
			var want []series.Point
			err := s.reader.Read(ctx, read.Selection{Series: []index.Series{sr}, Start: start, End: end},
				func(_ index.Series, pts []series.Point, _ []read.Note) error {
					want = pts
					return nil
				})
			mustOK(t, err)
			f, err := s.reader.Fetch(ctx, read.Selection{Series: all[i : i+1], Start: start, End: end, Plan: plan})
			mustOK(t, err)
			checkChunkWalk(t, r, promql.NewIterator(f.Iterator(ctx, 0, nil)), want, start, end)
		}
	}
}

// checkChunkWalk drives it and a position in want with the same random
// calls.
func checkChunkWalk(t *testing.T, r *rand.Rand, it *promql.Iterator, want []series.Point, start, end int64) {
	t.Helper()
	p := -1
	for step := 0; ; step++ {
		var vt chunkenc.ValueType
		if r.IntN(3) == 0 {
			ts := start + r.Int64N(end-start+1)/int64(1+r.IntN(3))
			vt = it.Seek(ts)
			if p < 0 || p >= len(want) || want[p].T < ts {
				p = max(p, 0)
				for p < len(want) && want[p].T < ts {
					p++
				}
			}
		} else {
			vt = it.Next()
			p++
		}
		if (vt == chunkenc.ValFloat) != (p < len(want)) {
			t.Fatalf("step %d: iterator says %v, model at %d of %d", step, vt, p, len(want))
		}
		if vt == chunkenc.ValNone {
			mustOK(t, it.Err())
			if it.Next() != chunkenc.ValNone || it.Seek(end) != chunkenc.ValNone {
				t.Fatal("the iterator moved after its end")
			}
			return
		}
		if ts, v := it.At(); ts != want[p].T || math.Float64bits(v) != math.Float64bits(wantFloat(want[p])) {
			t.Fatalf("step %d: at %d %v, want %+v", step, ts, v, want[p])
		}
	}
}

// wantFloat is the sample value Prometheus should see for p.
func wantFloat(p series.Point) float64 {
	if p.Kind != series.Int && p.Bits == series.StaleNaN {
		return math.Float64frombits(value.StaleNaN)
	}
	return p.Float()
}
