package head

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var limitOffered = flag.Int("ingest.limit.offered", 1_000_000, "distinct series TestSeriesLimitMemoryBounded offers past the limit")

// testClock is a settable clock for the series limits' windows.
type testClock struct{ ms atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ms.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *testClock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *testClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// TestSeriesWindowSlides: a window of span 4 s in slots of 1 s counts a
// series from its first write until the slot of its last write leaves,
// more than the span and at most span + one slot after it; a series
// written again moves to the newer slot; a new series past max is
// refused and a known one never is.
func TestSeriesWindowSlides(t *testing.T) {
	w := newSeriesWindow(3, 4000, 0)
	write := func(h uint64) bool {
		at := w.find(h)
		if !w.admits(at) {
			return false
		}
		w.add(h, at)
		return true
	}
	for _, h := range []uint64{1, 2, 3} {
		if !write(h) {
			t.Fatalf("series %d refused in an empty window", h)
		}
	}
	if write(4) || w.live != 3 {
		t.Fatalf("a 4th series admitted, live %d", w.live)
	}
	w.advance(1500)
	if !write(1) || w.live != 3 { // known: moves to slot 1
		t.Fatalf("known series refused or counted twice: live %d", w.live)
	}
	w.advance(4999) // slot 4: slot 0 (2 and 3's last write) is still in
	if write(4) || w.live != 3 {
		t.Fatalf("at 4.999 s a new series got in: live %d", w.live)
	}
	w.advance(5000) // slot 5: slot 0 leaves, 5 s after 2 and 3's writes
	if w.live != 1 || !write(4) || !write(5) || w.live != 3 || write(6) {
		t.Fatalf("after slot 0 left: live %d", w.live)
	}
	w.advance(7000) // slot 1 (1's last write) is in until 6.999 s... and out now
	if w.live != 2 {
		t.Fatalf("at 7 s live %d, want 2 (4 and 5)", w.live)
	}
	w.advance(1_000_000) // everything leaves at once
	if w.live != 0 || !write(1) {
		t.Fatalf("after a long pause live %d", w.live)
	}
	w.advance(500_000) // a clock going back changes nothing
	if w.live != 1 {
		t.Fatalf("clock going back: live %d", w.live)
	}
}

// limitStack is the write path from names on, as the daemon has it: UIDs
// on a real pebble store, the series index as the head's registrar, the
// head with series limits timed by a test clock.
type limitStack struct {
	db *tsdpebble.DB
	u  *uid.UIDs
	ix *index.Index
	h  *Head
	na *NameAppender
}

func limitedPipeline(t testing.TB, limits SeriesLimits, c *testClock) *limitStack {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	p := &limitStack{}
	var err error
	if p.db, err = tsdpebble.Open(t.TempDir(), &tsdpebble.Options{Logger: quiet, GCInterval: -1}); err != nil {
		t.Fatal(err)
	}
	if err := p.db.EnsureTable(ctx, schema.MetaTableSpec("tsdb-meta")); err != nil {
		t.Fatal(err)
	}
	meta, _ := p.db.Table(ctx, "tsdb-meta")
	if p.u, err = uid.Open(ctx, p.db, &uid.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	if p.ix, err = index.Open(ctx, meta, p.u, &index.Options{RefreshInterval: -1, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	opts := &HeadOptions{Registrar: p.ix, Logger: quiet, SeriesLimits: limits, Clock: c.now,
		WAL: wal.Options{FsyncInterval: -1}}
	if p.h, err = OpenHead(vfs.Default, t.TempDir(), opts); err != nil {
		t.Fatal(err)
	}
	p.na = p.h.NameAppender(p.u, 0)
	return p
}

func (p *limitStack) close() {
	p.h.Close()
	p.ix.Close()
	p.db.Close()
}

// TestSeriesLimitHourly: with tsd.core.max_hourly_series at 3, a point of
// a 4th series is refused naming the key (before any of its names gets a
// UID), points of the 3 series go on landing, the refusals are counted,
// and once the hour (plus its last quarter) has passed new series get in.
func TestSeriesLimitHourly(t *testing.T) {
	c := newTestClock()
	p := limitedPipeline(t, SeriesLimits{MaxHourly: 3}, c)
	defer p.close()
	ctx := context.Background()
	ms := c.ms.Load()
	add := func(host string, v int64) error {
		_, err := p.na.Append(ctx, []byte("lim.m"), hostTags(host), series.IntPoint(ms+v*1000, v))
		return err
	}
	for i, host := range []string{"a", "b", "c"} {
		if err := add(host, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.na.Commit(false); err != nil {
		t.Fatal(err)
	}
	err := add("d", 3)
	var le *SeriesLimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrSeriesLimit) || le.Limit != LimitHourlySeries ||
		!strings.Contains(err.Error(), "tsd.core.max_hourly_series") {
		t.Fatalf("4th series: %v, want a *SeriesLimitError naming %s", err, LimitHourlySeries)
	}
	if _, found, _ := p.u.Find(ctx, uid.TagV, []byte("d")); found {
		t.Error("the refused series' tag value got a UID")
	}
	c.add(50 * time.Minute)
	for i, host := range []string{"a", "b", "c"} {
		if err := add(host, int64(10+i)); err != nil {
			t.Fatalf("known series %s: %v", host, err)
		}
	}
	if err := p.na.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := add("d", 13); !errors.Is(err, ErrSeriesLimit) {
		t.Fatalf("4th series 50 min later: %v", err)
	}
	if st := p.h.SeriesLimitStats(); st.RefusedHourly != 2 || st.Hourly != 3 || st.RefusedDaily != 0 {
		t.Errorf("stats %+v, want 2 refused, 3 series in the hour", st)
	}
	c.add(76 * time.Minute) // 76 min after a, b and c's last points
	if err := add("d", 14); err != nil {
		t.Fatalf("new series after the hour: %v", err)
	}
	if err := p.na.Commit(false); err != nil {
		t.Fatal(err)
	}
	if st := p.h.SeriesLimitStats(); st.Hourly != 1 {
		t.Errorf("stats %+v, want 1 series in the hour", st)
	}
	if n := p.h.NumSeries(); n != 4 {
		t.Errorf("head holds %d series, want 4", n)
	}
}

// TestSeriesLimitDaily: the daily window refuses what the hourly one
// would let in, and names its own key.
func TestSeriesLimitDaily(t *testing.T) {
	c := newTestClock()
	p := limitedPipeline(t, SeriesLimits{MaxHourly: 10, MaxDaily: 2}, c)
	defer p.close()
	ctx := context.Background()
	for i, host := range []string{"a", "b"} {
		if _, err := p.na.Append(ctx, []byte("d.m"), hostTags(host), series.IntPoint(c.ms.Load(), int64(i))); err != nil {
			t.Fatal(err)
		}
		c.add(2 * time.Hour)
	}
	_, err := p.na.Append(ctx, []byte("d.m"), hostTags("c"), series.IntPoint(c.ms.Load(), 2))
	var le *SeriesLimitError
	if !errors.As(err, &le) || le.Limit != LimitDailySeries || !strings.Contains(err.Error(), "last day") {
		t.Fatalf("3rd series of the day: %v", err)
	}
	// 4 h after the first point and 2 h after the second: both out of the
	// hour, both in the day; the refused third was counted in neither.
	if st := p.h.SeriesLimitStats(); st.RefusedDaily != 1 || st.RefusedHourly != 0 || st.Daily != 2 || st.Hourly != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestSeriesLimitPerMetric: with tsd.core.max_series_per_metric at 2, a
// metric's third series is refused, whether the first two are in the
// series index or still being committed by another appender; series the
// index knows land whatever the count, and other metrics are not
// affected. A commit that fails releases its new series.
func TestSeriesLimitPerMetric(t *testing.T) {
	c := newTestClock()
	p := limitedPipeline(t, SeriesLimits{MaxPerMetric: 2}, c)
	defer p.close()
	ctx := context.Background()
	other := p.h.NameAppender(p.u, 0)
	add := func(n *NameAppender, metric, host string) error {
		_, err := n.Append(ctx, []byte(metric), hostTags(host), series.IntPoint(c.ms.Load(), 1))
		return err
	}
	if err := add(p.na, "pm.m", "a"); err != nil {
		t.Fatal(err)
	}
	if err := add(other, "pm.m", "b"); err != nil {
		t.Fatal(err)
	}
	// Neither is committed: both are pending, so a third is refused.
	err := add(p.na, "pm.m", "c")
	var le *SeriesLimitError
	if !errors.As(err, &le) || le.Limit != LimitSeriesPerMetric || le.Metric != "pm.m" ||
		!strings.Contains(err.Error(), `metric "pm.m" has 2 series`) {
		t.Fatalf("3rd series while 2 are pending: %v", err)
	}
	if err := add(p.na, "pm.m", "a"); err != nil { // named again before commit: still one
		t.Fatal(err)
	}
	if err := add(p.na, "pm.other", "c"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*NameAppender{p.na, other} {
		if err := n.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.ix.MetricSeries(p.metricUID(t, "pm.m")); n != 2 {
		t.Fatalf("index holds %d series of pm.m", n)
	}
	if err := add(p.na, "pm.m", "c"); !errors.Is(err, ErrSeriesLimit) {
		t.Fatalf("3rd series after commit: %v", err)
	}
	// A fresh appender (empty cache) writing the known series: they are
	// in the index, so they land.
	fresh := p.h.NameAppender(p.u, 0)
	for _, host := range []string{"b", "a"} {
		if err := add(fresh, "pm.m", host); err != nil {
			t.Fatalf("known series %s from a fresh appender: %v", host, err)
		}
	}
	fresh.Rollback()
	// Pending new series of a commit that never happens are released.
	if err := add(other, "pm.new", "x"); err != nil {
		t.Fatal(err)
	}
	if err := add(other, "pm.new", "y"); err != nil {
		t.Fatal(err)
	}
	if err := add(p.na, "pm.new", "z"); !errors.Is(err, ErrSeriesLimit) {
		t.Fatalf("pm.new 3rd: %v", err)
	}
	other.Rollback()
	if err := add(p.na, "pm.new", "z"); err != nil {
		t.Fatalf("after the other appender rolled back: %v", err)
	}
	if st := p.h.SeriesLimitStats(); st.RefusedPerMetric != 3 {
		t.Errorf("stats %+v, want 3 refused per metric", st)
	}
}

func (p *limitStack) metricUID(t testing.TB, name string) uid.ID {
	id, found, err := p.u.Find(context.Background(), uid.Metric, []byte(name))
	if err != nil || !found {
		t.Fatalf("metric %s: %v %v", name, found, err)
	}
	return id
}

// TestSeriesLimitMemoryBounded: offering a million distinct new series
// (-ingest.limit.offered) past a limit of 1,000 costs fixed memory: the
// limiter's windows hold the admitted series alone, the refused series get no UID and no
// head series, and the heap in use ends within a few MB of where it began.
func TestSeriesLimitMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("offers a million series")
	}
	c := newTestClock()
	const max = 1000
	p := limitedPipeline(t, SeriesLimits{MaxHourly: max, MaxDaily: max, MaxPerMetric: max}, c)
	defer p.close()
	ctx := context.Background()
	offered := *limitOffered
	if invariants.RaceEnabled {
		offered = min(offered, 50_000)
	}
	var host []byte
	refused := 0
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	var before uint64
	for i := range offered {
		if i == 2*max { // the limit is full and the caches warm: measure from here
			before = heap()
		}
		host = strconv.AppendInt(append(host[:0], 'h'), int64(i), 10)
		_, err := p.na.Append(ctx, []byte("mem.m"), []uid.Tag{{Key: []byte("host"), Value: host}}, series.IntPoint(c.ms.Load(), 1))
		switch {
		case err == nil:
		case errors.Is(err, ErrSeriesLimit):
			refused++
		default:
			t.Fatal(err)
		}
		if i%4096 == 4095 {
			if err := p.na.Commit(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.na.Commit(false); err != nil {
		t.Fatal(err)
	}
	after := heap()
	if refused != offered-max || p.h.NumSeries() != max || p.ix.Len() != max {
		t.Fatalf("refused %d of %d, head %d series, index %d, want %d admitted", refused, offered, p.h.NumSeries(), p.ix.Len(), max)
	}
	if n := len(p.h.limiter.mu.hourly.last); n != max {
		t.Fatalf("the hourly window holds %d series, want the %d admitted", n, max)
	}
	if _, found, _ := p.u.Find(ctx, uid.TagV, []byte("h"+strconv.Itoa(offered-1))); found {
		t.Error("a refused series' tag value got a UID")
	}
	t.Logf("%d series offered, %d refused; heap in use %d -> %d bytes", offered, refused, before, after)
	if grew := int64(after) - int64(before); grew > 8<<20 {
		t.Errorf("heap in use grew by %d bytes while %d series were refused", grew, offered-2*max)
	}
}

// TestSeriesLimitKnownSeriesAllocs: with every limit on, a point of a
// series the appender knows costs no allocation, also when the limiter's
// epoch moves and the series is checked again.
func TestSeriesLimitKnownSeriesAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	c := newTestClock()
	p := limitedPipeline(t, SeriesLimits{MaxHourly: 100, MaxDaily: 100, MaxPerMetric: 100}, c)
	defer p.close()
	ctx := context.Background()
	tags := []uid.Tag{{Key: []byte("host"), Value: []byte("web01")}, {Key: []byte("cpu"), Value: []byte("0")}}
	metric := []byte("alloc.m")
	ts := c.ms.Load()
	run := func() {
		for range 100 {
			ts += 1000
			if _, err := p.na.Append(ctx, metric, tags, series.IntPoint(ts, 1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.na.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	run() // names assigned, series created and registered
	run() // rows sized
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%.1f allocations per 100 points of a known series", n)
	}
	epoch := p.h.limiter.epoch.Load()
	moved := func() {
		c.add(15 * time.Minute) // a new slot: every series is checked again
		run()
	}
	if n := testing.AllocsPerRun(20, moved); n != 0 {
		t.Errorf("%.1f allocations per 100 points across a slot change", n)
	}
	if p.h.limiter.epoch.Load() == epoch {
		t.Fatal("the epoch never moved")
	}
}

// TestSeriesLimitConcurrent: appenders on four goroutines offer distinct
// new series of one metric at once, committing as they go; the limits
// hold exactly: as many series as tsd.core.max_series_per_metric allows
// land, in the head and the index, and the hourly window counts them.
func TestSeriesLimitConcurrent(t *testing.T) {
	c := newTestClock()
	const perMetric, goroutines, each = 200, 4, 500
	p := limitedPipeline(t, SeriesLimits{MaxHourly: 300, MaxPerMetric: perMetric}, c)
	defer p.close()
	ctx := context.Background()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			n := p.h.NameAppender(p.u, 0)
			for i := range each {
				host := "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
				_, err := n.Append(ctx, []byte("conc.m"), []uid.Tag{{Key: []byte("host"), Value: []byte(host)}},
					series.IntPoint(c.ms.Load(), int64(i)))
				switch {
				case err == nil:
					admitted.Add(1)
				case !errors.Is(err, ErrSeriesLimit):
					t.Error(err)
					return
				}
				if i%37 == 36 {
					if err := n.Commit(false); err != nil {
						t.Error(err)
						return
					}
				}
			}
			if err := n.Commit(false); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := p.h.SeriesLimitStats()
	if admitted.Load() != perMetric || p.h.NumSeries() != perMetric || p.ix.MetricSeries(p.metricUID(t, "conc.m")) != perMetric ||
		st.Hourly != perMetric || st.RefusedPerMetric != goroutines*each-perMetric {
		t.Errorf("admitted %d, head %d, index %d, stats %+v; want %d series", admitted.Load(), p.h.NumSeries(),
			p.ix.MetricSeries(p.metricUID(t, "conc.m")), st, perMetric)
	}
}

// TestSeriesWindowExactWhenFull: a window holding its limit of 100
// series refuses each of 100,000 other series (a Bloom filter let about
// 0.2 % through uncounted), and once every slot has left, its map holds
// nothing (memory follows the series counted).
func TestSeriesWindowExactWhenFull(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	w := newSeriesWindow(100, 4000, 0)
	for range 100 {
		h := r.Uint64()
		w.add(h, w.find(h))
	}
	if w.live != 100 {
		t.Fatalf("live %d after 100 series", w.live)
	}
	in := 0
	for range 100_000 {
		if w.admits(w.find(r.Uint64())) {
			in++
		}
	}
	if in != 0 {
		t.Fatalf("%d of 100,000 new series admitted into a full window", in)
	}
	w.advance(5 * 1000) // slot 5: slot 0 left the window
	if w.live != 0 || len(w.last) != 0 {
		t.Fatalf("after the window moved past every write: live %d, %d entries", w.live, len(w.last))
	}
}
