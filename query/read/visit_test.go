package read_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid/index"
)

// collectVisitor gathers a Visit's points per series, checking that each
// series' batches arrive in time order.
type collectVisitor struct {
	mu    sync.Mutex
	pts   [][]series.Point
	err   error
	calls int
}

func (c *collectVisitor) Points(i int, pts []series.Point) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if len(pts) == 0 {
		c.err = fmt.Errorf("series %d: empty batch", i)
	}
	if n := len(c.pts[i]); n > 0 && len(pts) > 0 && pts[0].T <= c.pts[i][n-1].T {
		c.err = fmt.Errorf("series %d: batch at %d after %d", i, pts[0].T, c.pts[i][n-1].T)
	}
	c.pts[i] = append(c.pts[i], pts...) // pts is the reader's buffer: copied
	return nil
}

func (c *collectVisitor) Notes(int, []read.Note) {}

// TestVisitMatchesModel checks that Visit gives every selected series'
// points (store and head merged, the head winning) under both plans.
func TestVisitMatchesModel(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
		for _, rg := range modelRanges {
			for _, sel := range [][]index.Series{all, all[:3]} {
				name := fmt.Sprintf("%s/%d-%d/%d", plan, rg[0]-t0, rg[1]-t0, len(sel))
				v := &collectVisitor{pts: make([][]series.Point, len(sel))}
				if err := r.Visit(context.Background(), read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan}, v); err != nil {
					t.Fatal(err)
				}
				if v.err != nil {
					t.Fatalf("%s: %v", name, v.err)
				}
				total := 0
				for i, x := range sel {
					h := hostOf(t, s, x)
					want := m.want(h, rg[0], rg[1])
					if !slices.Equal(v.pts[i], want) {
						t.Fatalf("%s: host %s: got %d points, want %d", name, h, len(v.pts[i]), len(want))
					}
					total += len(want)
				}
				if rg[1]-rg[0] > hourMs && total > 0 && v.calls <= len(sel) {
					t.Fatalf("%s: %d calls: points not given row by row", name, v.calls)
				}
			}
		}
	}
}

// TestVisitBudget checks that a visit past a limit fails with a
// *LimitError naming it.
func TestVisitBudget(t *testing.T) {
	s := openStack(t)
	loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	for _, tc := range limitCases {
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			v := &collectVisitor{pts: make([][]series.Point, len(all))}
			err := r.Visit(context.Background(), budgetSel(all, plan, tc.limits), v)
			wantLimit(t, tc.what+" "+plan.String(), err, tc.what)
		}
	}
}
