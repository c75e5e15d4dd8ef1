package read_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// t0 is the first hour of the test data.
const (
	t0     = int64(1_700_000_000_000 / 3_600_000 * 3_600_000)
	hourMs = int64(3_600_000)
)

// model is what the test wrote: host -> time -> last point written.
type model map[string]map[int64]series.Point

func (m model) put(s *stack, t testing.TB, host string, p series.Point) {
	s.put(t, "m", host, p)
	if m[host] == nil {
		m[host] = map[int64]series.Point{}
	}
	m[host][p.T] = p
}

// want returns host's points in [start, end], sorted.
func (m model) want(host string, start, end int64) []series.Point {
	var out []series.Point
	for _, ts := range slices.Sorted(maps.Keys(m[host])) {
		if ts >= start && ts <= end {
			out = append(out, m[host][ts])
		}
	}
	return out
}

func randPoint(rng *rand.Rand, ts int64) series.Point {
	if rng.IntN(3) == 0 {
		return series.Float64Point(ts, rng.NormFloat64()*100)
	}
	return series.IntPoint(ts, rng.Int64N(1000)-500)
}

// loadSplit writes 12 series over 6 hours: hours 0-2 flushed to the
// store, then hours 3-5 plus late and overwriting points in hours 1-2
// left in the head.
func loadSplit(t testing.TB, s *stack) model {
	rng := rand.New(rand.NewPCG(1, 2))
	m := model{}
	hosts := make([]string, 12)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%02d", i)
	}
	write := func(fromHour, toHour int64) {
		for _, h := range hosts {
			for ts := t0 + fromHour*hourMs; ts < t0+toHour*hourMs; ts += 15_000 + rng.Int64N(60_000) {
				m.put(s, t, h, randPoint(rng, ts))
			}
		}
	}
	write(0, 3)
	s.flushAll(t)
	write(3, 6)
	for _, h := range hosts[:6] {
		stored := m.want(h, t0+hourMs, t0+3*hourMs-1)
		for range 20 {
			ts := t0 + hourMs + rng.Int64N(2*hourMs)
			if rng.IntN(2) == 0 {
				ts = stored[rng.IntN(len(stored))].T // overwrite a stored point: the head's wins
			}
			m.put(s, t, h, randPoint(rng, ts))
		}
	}
	return m
}

// readAll runs Read and returns the points by host.
func readAll(t testing.TB, s *stack, r *read.Reader, sel read.Selection) map[string][]series.Point {
	t.Helper()
	got := map[string][]series.Point{}
	err := r.Read(context.Background(), sel, func(x index.Series, pts []series.Point, _ []read.Note) error {
		got[hostOf(t, s, x)] = pts
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func hostOf(t testing.TB, s *stack, x index.Series) string {
	t.Helper()
	n := len(x.TSUID)
	name, err := s.uids.Name(context.Background(), 2, idOf(x.TSUID[n-3:]))
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func idOf(b string) uid.ID { return uid.ID(b[0])<<16 | uid.ID(b[1])<<8 | uid.ID(b[2]) }

func TestReadMatchesModel(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	all := s.selection(t, "m")
	for _, plan := range []read.Plan{read.PlanAuto, read.PlanSeries, read.PlanScan} {
		for _, rg := range modelRanges {
			for _, sel := range [][]index.Series{all, all[:3]} {
				name := fmt.Sprintf("%s/%d-%d/%d", plan, rg[0]-t0, rg[1]-t0, len(sel))
				got := readAll(t, s, r, read.Selection{Series: sel, Start: rg[0], End: rg[1], Plan: plan})
				checkGot(t, name, s, sel, m, got, rg)
			}
		}
	}
	if st := r.Stats(); st.PlansScan == 0 || st.PlansSeries == 0 || st.Gets == 0 || st.Scans == 0 {
		t.Fatalf("stats %+v: both plans should have run", st)
	}
}

func checkGot(t *testing.T, name string, s *stack, sel []index.Series, m model, got map[string][]series.Point, rg [2]int64) {
	t.Helper()
	for _, x := range sel {
		h := hostOf(t, s, x)
		want := m.want(h, rg[0], rg[1])
		if !slices.Equal(got[h], want) {
			t.Fatalf("%s: host %s: got %d points, want %d\n got %v\nwant %v", name, h, len(got[h]), len(want), head(got[h]), head(want))
		}
		delete(got, h)
	}
	if len(got) != 0 {
		t.Fatalf("%s: unselected series returned: %v", name, slices.Collect(maps.Keys(got)))
	}
}

func head(p []series.Point) []series.Point { return p[:min(len(p), 4)] }

func TestIteratorMatchesModel(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	r := s.reader(t, read.Options{})
	ctx := context.Background()
	for _, x := range s.selection(t, "m") {
		h := hostOf(t, s, x)
		want := m.want(h, t0+100, t0+5*hourMs)
		it := r.Iterator(ctx, x, t0+100, t0+5*hourMs, nil)
		var got []series.Point
		for it.Next() {
			got = append(got, it.At())
		}
		if it.Err() != nil || !slices.Equal(got, want) {
			t.Fatalf("host %s: %d points (err %v), want %d", h, len(got), it.Err(), len(want))
		}
		// SeekTime lands on the first point at or after the target,
		// across hours, and never moves back.
		it = r.Iterator(ctx, x, t0, t0+6*hourMs, nil)
		all, pos := m.want(h, t0, t0+6*hourMs), 0
		for _, target := range []int64{t0 + hourMs/2, t0 + 2*hourMs + 7, t0 + 2*hourMs, t0 + 4*hourMs, t0 + 7*hourMs} {
			i, _ := slices.BinarySearchFunc(all, target, func(p series.Point, t int64) int { return int(p.T - t) })
			pos = max(pos, i) // never backwards
			ok := it.SeekTime(target)
			if pos >= len(all) {
				if ok {
					t.Fatalf("seek %d: found %v past the end", target-t0, it.At())
				}
				continue
			}
			if !ok || it.At() != all[pos] {
				t.Fatalf("host %s seek %d: ok=%v", h, target-t0, ok)
			}
		}
	}
}

// modelRanges are the ranges the model tests read loadSplit's "m" over:
// whole and part hours, one point in time, before the data, and rows
// both stored and in the head.
var modelRanges = [][2]int64{
	{t0, t0 + 6*hourMs}, {t0 + 1_234, t0 + 2*hourMs + 99}, {t0 + 3*hourMs, t0 + 3*hourMs},
	{t0 - 10*hourMs, t0 - 1}, {t0 + 2*hourMs + 1, t0 + 4*hourMs - 1},
}

// limitCases are limits that reading all of loadSplit's "m" over 6 hours
// (budgetSel) crosses, with the limit each names.
var limitCases = []struct {
	limits read.Limits
	what   string
}{
	{read.Limits{MaxSeries: 5}, "series"},
	{read.Limits{MaxPoints: 100}, "data points"},
	{read.Limits{MaxBytes: 100 * read.PointBytes}, "bytes"},
}

// budgetSel selects every series of sel over loadSplit's 6 hours under
// plan with a new budget of l.
func budgetSel(sel []index.Series, plan read.Plan, l read.Limits) read.Selection {
	return read.Selection{Series: sel, Start: t0, End: t0 + 6*hourMs, Plan: plan, Budget: read.NewBudget(l)}
}

// wantLimit fails unless err is a *LimitError naming what.
func wantLimit(t *testing.T, name string, err error, what string) {
	t.Helper()
	var le *read.LimitError
	if !errors.As(err, &le) || le.Limit != what || !errors.Is(err, read.ErrLimit) {
		t.Fatalf("%s: got %v, want the %s limit", name, err, what)
	}
}

func TestBudget(t *testing.T) {
	s := openStack(t)
	loadSplit(t, s)
	r := s.reader(t, read.Options{})
	sel := s.selection(t, "m")
	for _, tc := range limitCases {
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			err := r.Read(context.Background(), budgetSel(sel, plan, tc.limits),
				func(index.Series, []series.Point, []read.Note) error { return nil })
			wantLimit(t, tc.what+" "+plan.String(), err, tc.what)
		}
	}
	// Within the limits, nothing is refused and the spend is counted.
	b := read.NewBudget(read.Limits{MaxSeries: 12, MaxPoints: 1 << 20})
	readAll(t, s, r, read.Selection{Series: sel, Start: t0, End: t0 + 6*hourMs, Budget: b})
	if ns, np := b.Spent(); ns != 12 || np == 0 {
		t.Fatalf("spent %d series %d points", ns, np)
	}
}

func TestRetentionHidesOldPoints(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	rules, err := retention.Parse("m:2h")
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(t0 + 5*hourMs)
	r := s.reader(t, read.Options{Retention: rules, Now: func() time.Time { return now }})
	sel := s.selection(t, "m")
	got := readAll(t, s, r, read.Selection{Series: sel, Start: t0, End: t0 + 6*hourMs})
	cut := rules.Cutoff("m", now)
	checkGot(t, "retention", s, sel, m, got, [2]int64{cut, t0 + 6*hourMs})
}

// TestCorruptCellSkipped breaks one cell of a stored row: the rest of the
// row and the other series still read, and the cell is counted.
func TestCorruptCellSkipped(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	sel := s.selection(t, "m")
	ctx := context.Background()
	row, err := s.layout.AppendRowKeyFromTSUID(nil, []byte(sel[0].TSUID), t0)
	if err != nil {
		t.Fatal(err)
	}
	// An extra single-point column with a value of the wrong length.
	bad := storage.Cell{Family: "t", Qualifier: []byte{0x00, 0x17}, Value: []byte{1, 2, 3}}
	note := storage.Cell{Family: "t", Qualifier: []byte{0x01, 0x00, 0x7B}, Value: []byte(`{"description":"d"}`)}
	if err := s.data.Put(ctx, row, []storage.Cell{bad, note}); err != nil {
		t.Fatal(err)
	}
	r := s.reader(t, read.Options{})
	for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
		var notes []read.Note
		got := map[string][]series.Point{}
		err := r.Read(ctx, read.Selection{Series: sel, Start: t0, End: t0 + 6*hourMs, Plan: plan, Notes: true},
			func(x index.Series, pts []series.Point, n []read.Note) error {
				got[hostOf(t, s, x)] = pts
				notes = append(notes, n...)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		checkGot(t, "corrupt "+plan.String(), s, sel, m, got, [2]int64{t0, t0 + 6*hourMs})
		if len(notes) != 1 || notes[0].T != t0+123_000 || string(notes[0].Value) != `{"description":"d"}` {
			t.Fatalf("%s: notes %+v", plan, notes)
		}
	}
	if st := r.Stats(); st.CorruptCells != 2 {
		t.Fatalf("corrupt cells counted %d, want 2 (one per plan)", st.CorruptCells)
	}
}

// TestConcurrentReadsAndWrites reads while points arrive and rows flush:
// every read sees at least the points committed before it started.
func TestConcurrentReadsAndWrites(t *testing.T) {
	s := openStack(t)
	r := s.reader(t, read.Options{})
	s.put(t, "m", "h00", series.IntPoint(t0, 0))
	sel := s.selection(t, "m")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var committed sync.Map
	wg.Go(func() {
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.put(t, "m", "h00", series.IntPoint(t0+i*1000, i))
			committed.Store("n", i)
			if i%500 == 0 {
				s.flushAll(t)
			}
		}
	})
	// Every way of reading: Read, Visit and Fetch's iterators, under both
	// plans; each must hold every point committed before it started, none
	// missing (a row flushed between the head read and the store read
	// would leave a hole).
	ctx := context.Background()
	reads := map[string]func(read.Selection) []series.Point{
		"read": func(sel read.Selection) []series.Point { return readAll(t, s, r, sel)["h00"] },
		"visit": func(sel read.Selection) []series.Point {
			v := &collectVisitor{pts: make([][]series.Point, 1)}
			if err := r.Visit(ctx, sel, v); err != nil || v.err != nil {
				t.Fatalf("visit: %v %v", err, v.err)
			}
			return v.pts[0]
		},
		"fetch": func(sel read.Selection) []series.Point {
			f, err := r.Fetch(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Release()
			it := f.Iterator(ctx, 0, nil)
			defer it.Close()
			var pts []series.Point
			for it.Next() {
				pts = append(pts, it.At())
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			return pts
		},
	}
	fail := func(format string, args ...any) {
		t.Helper()
		close(stop) // the writer stops before the test ends and its stack closes
		wg.Wait()
		t.Fatalf(format, args...)
	}
	for i := range 30 {
		for name, get := range reads {
			plan := []read.Plan{read.PlanSeries, read.PlanScan}[i%2]
			v, _ := committed.Load("n")
			n, _ := v.(int64)
			pts := get(read.Selection{Series: sel, Start: t0, End: t0 + 10*hourMs, Plan: plan})
			if int64(len(pts)) < n+1 {
				fail("%s/%s: read %d points after %d were committed", name, plan, len(pts), n+1)
			}
			for j := range n + 1 {
				if pts[j].T != t0+j*1000 {
					fail("%s/%s: point %d at %d, want %d", name, plan, j, pts[j].T, t0+j*1000)
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	_ = rowkey.BaseTime
}

func TestParsePlanAndForcedPlan(t *testing.T) {
	for _, p := range []read.Plan{read.PlanAuto, read.PlanSeries, read.PlanScan} {
		if got, err := read.ParsePlan(p.String()); err != nil || got != p {
			t.Fatalf("ParsePlan(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := read.ParsePlan("fast"); err == nil {
		t.Fatal("ParsePlan accepted an unknown plan")
	}
	s := openStack(t)
	loadSplit(t, s)
	r := s.reader(t, read.Options{Plan: read.PlanScan})
	readAll(t, s, r, read.Selection{Series: s.selection(t, "m")[:1], Start: t0, End: t0 + hourMs})
	if st := r.Stats(); st.PlansScan != 1 || st.PlansSeries != 0 {
		t.Fatalf("Options.Plan scan: stats %+v", st)
	}
}

// TestReadCallsInSelectionOrder: Read gives the series in the selection's
// order under both plans, whatever order its workers finish them in (an
// engine adding floats across series then adds them in one order).
func TestReadCallsInSelectionOrder(t *testing.T) {
	s := openStack(t)
	loadSplit(t, s)
	r := s.reader(t, read.Options{Parallelism: 4})
	all := s.selection(t, "m")
	rev := slices.Clone(all)
	slices.Reverse(rev)
	for _, sel := range [][]index.Series{all, rev} {
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			var got []string
			err := r.Read(context.Background(), read.Selection{Series: sel, Start: t0, End: t0 + 6*hourMs, Plan: plan},
				func(x index.Series, _ []series.Point, _ []read.Note) error {
					got = append(got, x.TSUID)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(sel))
			for i, x := range sel {
				want[i] = x.TSUID
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: series in the order %x, want %x", plan, got, want)
			}
		}
	}
}
