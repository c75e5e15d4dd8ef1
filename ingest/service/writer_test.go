package service

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

func point(metric string, ms int64, v int64, tags ...string) *parse.Point {
	p := &parse.Point{Metric: []byte(metric), Value: series.Point{T: ms, Kind: series.Int, Bits: uint64(v)}}
	for i := 0; i+1 < len(tags); i += 2 {
		p.AddTag([]byte(tags[i]), []byte(tags[i+1]))
	}
	return p
}

func TestSessionAddCommit(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	s := st.w.Session(Telnet)
	defer s.Release()
	for i, p := range []*parse.Point{
		point("m", 1000, 1, "host", "a"),
		point("m", 2000, 2, "host", "a"),
		point("m", 1000, 3, "host", "b"),
	} {
		if err := s.Add(ctx, p); err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
	}
	if got := st.points(t, "m", "host", "a"); len(got) != 0 {
		t.Fatalf("visible before Commit: %v", got)
	}
	if err := s.Commit(true); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(st.points(t, "m", "host", "a"), ";")
	if want := "{} 1000 1i;{} 2000 2i"; got != want {
		t.Errorf("host=a: %s, want %s", got, want)
	}
	if n := st.w.Stats(Telnet).Points.Load(); n != 3 {
		t.Errorf("points counted %d, want 3", n)
	}
}

func TestSessionBadPoint(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	s := st.w.Session(Influx)
	defer s.Release()
	err := s.Add(ctx, point("m", head.MaxTimestamp+1, 1))
	var pe *PointError
	if !errors.As(err, &pe) || errors.Is(err, ErrThrottled) {
		t.Fatalf("out of range point: %v, want a *PointError", err)
	}
	bad := &parse.Point{Metric: []byte("bad\x01name"), Value: series.Point{T: 1000}}
	if err := s.Add(ctx, bad); !errors.As(err, &pe) {
		t.Fatalf("invalid name: %v, want a *PointError", err)
	}
	if err := s.Add(ctx, point("m", 5000, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.points(t, "m"), ";"); got != "{} 5000 5i" {
		t.Errorf("good point next to bad ones: %q", got)
	}
	if n := st.w.Stats(Influx).Bad.Load(); n != 2 {
		t.Errorf("bad counted %d, want 2", n)
	}
}

func TestSessionThrottled(t *testing.T) {
	// A head over its memory limit with no flusher loop refuses commits.
	st := newStack(t, &head.HeadOptions{MaxMemory: 1})
	s := st.w.Session(Put)
	defer s.Release()
	ctx := context.Background()
	for i := range 3 {
		if err := s.Add(ctx, point("m", int64(1000*(i+1)), 1, "host", "a")); err != nil {
			t.Fatal(err)
		}
		err := s.Commit(false)
		if i > 0 && !errors.Is(err, ErrThrottled) {
			t.Fatalf("commit %d over the limit: %v, want ErrThrottled", i, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "Please throttle writes: ") {
			t.Errorf("throttle text %q", err)
		}
	}
	// OpenTSDB's rpc.errors type=socket_writes_blocked, not hbase_errors.
	if c := st.w.Stats(Put); c.Throttled.Load() < 2 || c.Blocked.Load() != c.Throttled.Load() || c.StoreErrors.Load() != 0 {
		t.Errorf("throttled %d, blocked %d, store errors %d; want blocked = throttled >= 2, none for the store",
			c.Throttled.Load(), c.Blocked.Load(), c.StoreErrors.Load())
	}
}

func TestSessionSteadyStateAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	st := newStack(t, nil)
	s := st.w.Session(Telnet)
	defer s.Release()
	ctx := context.Background()
	p := point("sys.cpu.user", 1000, 1, "host", "web01", "cpu", "0")
	warm := func() {
		p.Value.T += 1000
		if err := s.Add(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		warm()
	}
	if err := s.Commit(false); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, warm); a != 0 {
		t.Errorf("Add allocates %.1f per point in steady state", a)
	}
	s.Rollback()
}

func BenchmarkSessionAdd(b *testing.B) {
	st := newStack(b, nil)
	s := st.w.Session(Telnet)
	defer s.Release()
	ctx := context.Background()
	p := point("sys.cpu.user", 1000, 1, "host", "web01", "cpu", "0")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Value.T += 1000
		if err := s.Add(ctx, p); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := s.Commit(false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestWriterDropCaches(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	s := st.w.Session(Telnet)
	defer s.Release()
	add := func(ms int64) {
		t.Helper()
		if err := s.Add(ctx, point("m", ms, 1)); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	add(1000)
	if err := st.uids.Rename(ctx, uid.Metric, "m", "m2"); err != nil {
		t.Fatal(err)
	}
	st.w.DropCaches() // the session must forget that "m" was the renamed series
	add(2000)
	if got := strings.Join(st.points(t, "m2"), ";"); got != "{} 1000 1i" {
		t.Errorf("m2 (renamed) holds %q", got)
	}
	if got := strings.Join(st.points(t, "m"), ";"); got != "{} 2000 1i" {
		t.Errorf("m (new UID) holds %q", got)
	}
}

// TestSessionAddOwned: AddOwned stores a point as Add does; Add leaves the
// caller's tags in their order, AddOwned may sort them (a new series).
func TestSessionAddOwned(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	s := st.w.Session(Telnet)
	defer s.Release()
	kept := point("m", 1000, 1, "z", "1", "a", "2")
	owned := point("m", 2000, 2, "z", "1", "a", "2")
	if err := s.Add(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if err := s.AddOwned(ctx, owned); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(st.points(t, "m", "a", "2", "z", "1"), ";"), "{} 1000 1i;{} 2000 2i"; got != want {
		t.Errorf("points %s, want %s", got, want)
	}
	if k := string(kept.Tags[0].Key); k != "z" {
		t.Errorf("Add reordered the caller's tags: first key %q", k)
	}
}

// TestSessionLongNamesAreBadData: a metric, tag key or tag value longer
// than a row key may be (4,096 bytes) is the point's own fault: a
// *PointError naming the field, never a throttle the client would retry
// for ever, and the good points beside it land.
func TestSessionLongNamesAreBadData(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	s := st.w.Session(RemoteWrite)
	defer s.Release()
	long := strings.Repeat("n", 4097)
	for i, tc := range []struct {
		p     *parse.Point
		field string
	}{
		{point(long, 1000, 1, "host", "a"), "metric name of 4097 bytes exceeds 4096"},
		{point("m", 1000, 1, long, "a"), "tag name of 4097 bytes exceeds 4096"},
		{point("m", 1000, 1, "host", long), "tag value of 4097 bytes exceeds 4096"},
	} {
		if err := s.Add(ctx, point("m", int64(i+1)*10_000, int64(i), "host", "a")); err != nil {
			t.Fatal(err)
		}
		err := s.Add(ctx, tc.p)
		var pe *PointError
		if !errors.As(err, &pe) || errors.Is(err, ErrThrottled) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("case %d: %v, want a *PointError saying %q", i, err, tc.field)
		}
	}
	if err := s.Commit(false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.points(t, "m", "host", "a"), ";"); got != "{} 10000 0i;{} 20000 1i;{} 30000 2i" {
		t.Errorf("neighbours: %q", got)
	}
	c := st.w.Stats(RemoteWrite)
	if c.Bad.Load() != 3 || c.Throttled.Load() != 0 || c.Points.Load() != 3 {
		t.Errorf("counted bad %d throttled %d points %d, want 3 0 3", c.Bad.Load(), c.Throttled.Load(), c.Points.Load())
	}
}
