package promql_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// TestSelectReadsOnIteration: a Select whose samples are never iterated
// (series and label look-ups) reads no row; iterating its series runs one
// read of the metric, a scan when they are all of it, and the querier's
// Close returns the iterators, whose reuse by the next query stays
// correct.
func TestSelectReadsOnIteration(t *testing.T) {
	ctx := context.Background()
	s := openStack(t, stackOptions{})
	loadTSD(ctx, t, s, rand.New(rand.NewPCG(1, 8)), genReference(rand.New(rand.NewPCG(1, 7))))
	m := labels.MustNewMatcher(labels.MatchEqual, "__name__", "gauge_a")
	before := s.reader.Stats()
	qr, err := s.q.Querier(refStart, refEnd)
	mustOK(t, err)
	ss := qr.Select(ctx, true, nil, m)
	n := 0
	for ss.Next() {
		n++
	}
	mustOK(t, ss.Err())
	if st := s.reader.Stats(); n != 9 || st.Gets != before.Gets || st.Scans != before.Scans {
		t.Fatalf("%d series; a Select without iteration read: %+v, before %+v", n, st, before)
	}
	var sums [2]float64
	for round := range 2 {
		qr, err := s.q.Querier(refStart, refEnd)
		mustOK(t, err)
		ss := qr.Select(ctx, true, nil, m)
		var it chunkenc.Iterator
		for ss.Next() {
			it = ss.At().Iterator(it)
			for it.Next() == chunkenc.ValFloat {
				_, v := it.At()
				sums[round] += v
			}
			mustOK(t, it.Err())
		}
		mustOK(t, qr.Close())
	}
	st := s.reader.Stats()
	if st.PlansScan-before.PlansScan != 2 || st.Scans == before.Scans {
		t.Fatalf("two queries over the whole metric: stats %+v, before %+v", st, before)
	}
	if sums[0] != sums[1] || sums[0] == 0 {
		t.Fatalf("sums %v: the second query, on recycled iterators, read other values", sums)
	}
}
