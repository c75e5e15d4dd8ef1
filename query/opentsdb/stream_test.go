package opentsdb_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// streamAll writes q's answer through a Stream, max bytes a call, and
// returns it with the number of calls.
func streamAll(t testing.TB, e *opentsdb.Engine, q *tsquery.TSQuery, o opentsdb.JSONOptions, max int) (string, int, error) {
	t.Helper()
	st, err := e.Stream(context.Background(), q, o)
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	var out, chunk []byte
	for calls := 1; ; calls++ {
		var done bool
		chunk, done, err = st.AppendJSON(context.Background(), chunk[:0], max)
		out = append(out, chunk...)
		if err != nil || done {
			return string(out), calls, err
		}
		if len(chunk) < max {
			t.Fatalf("a call stopped at %d bytes, short of %d, before the end", len(chunk), max)
		}
		if calls > 1e6 {
			t.Fatalf("a million calls, the last %q, and no end after %q", chunk, out[:min(len(out), 2000)])
		}
	}
}

// annotate stores series and global annotations for the fill data set.
func annotate(t *testing.T, s *stack) {
	web01 := s.tsuidHex(t, s.raw[seriesName("sys.cpu", cpuSeries[0])])
	db01 := s.tsuidHex(t, s.raw[seriesName("sys.cpu", cpuSeries[2])])
	for _, a := range []annotation.Annotation{
		{TSUID: web01, StartTime: t0 + 120, Description: "deploy", Given: annotation.FieldDescription},
		{TSUID: web01, StartTime: t0 + 60, Description: "first", Notes: "n", Given: annotation.FieldDescription | annotation.FieldNotes},
		{TSUID: db01, StartTime: t0 + 5000, Description: "gap", Given: annotation.FieldDescription},
		{StartTime: t0 + 30, Description: "global", Given: annotation.FieldDescription},
	} {
		if _, err := s.notes.Put(context.Background(), &a, false); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStreamMatchesExecute writes a set of queries covering every field
// of the answer through Stream, in parts from 1 byte to the whole, and
// through Execute's AppendJSON: the bytes are the same, and a part never
// ends short of its size before the answer ends.
func TestStreamMatchesExecute(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	annotate(t, s)
	type tc struct {
		ms  []string
		set func(*tsquery.TSQuery)
		o   opentsdb.JSONOptions
	}
	all := func(q *tsquery.TSQuery) {
		q.ShowTSUIDs, q.ShowQuery, q.GlobalAnnotations = true, true, true
	}
	cases := []tc{
		{ms: []string{"sum:sys.cpu{host=*}"}},
		{ms: []string{"sum:sys.cpu{host=*}", "avg:5m-avg-zero:sys.cpu{dc=*}", "none:net.bytes"}, set: all},
		{ms: []string{"sum:sys.cpu{host=*}", "max:rate:net.bytes{host=*}"}, set: all, o: opentsdb.JSONOptions{Arrays: true}},
		{ms: []string{"none:sys.cpu", "sum:1m-avg-null:temp{host=*}"}, set: func(q *tsquery.TSQuery) { q.MsResolution = true }},
		{ms: []string{"sum:nope.metric"}},
		{ms: []string{"sum:sys.cpu{host=web01}"}, set: func(q *tsquery.TSQuery) { q.NoAnnotations = true }},
		{ms: []string{"sum:ms.metric", "sum:sys.cpu{host=nomatch*}"}},
	}
	for i, c := range cases {
		q := func() *tsquery.TSQuery {
			q := mquery(t, sec(t0), sec(t0+3*3600), c.ms...)
			if c.set != nil {
				c.set(q)
			}
			return q
		}
		res, err := s.eng.Execute(context.Background(), q())
		if err != nil {
			if _, _, serr := streamAll(t, s.eng, q(), c.o, 100); serr == nil || serr.Error() != err.Error() {
				t.Errorf("case %d: Execute failed with %v, Stream with %v", i, err, serr)
			}
			continue
		}
		want := string(res.AppendJSON(nil, c.o))
		res.Release()
		for _, max := range []int{1, 7, 100, 4096, 1 << 30} {
			got, calls, err := streamAll(t, s.eng, q(), c.o, max)
			if err != nil {
				t.Fatalf("case %d max %d: %v", i, max, err)
			}
			if got != want {
				t.Fatalf("case %d max %d (%d calls):\n%s\nwant\n%s", i, max, calls, got, want)
			}
		}
	}
}

// TestLazyMatchesEager compares, byte for byte, raw and downsampled
// answers read group by group (Fetch, under both plans) with those read
// whole (Read), over random series of ints and floats split between the
// store and the head, with annotations in some rows, random aggregators,
// group-bys, rates and TSUIDs shown.
func TestLazyMatchesEager(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	rng := rand.New(rand.NewPCG(*randomSeed, 17))
	t.Logf("seed %d (-query.seed)", *randomSeed)
	write := func(fromHour, toHour int) {
		for h := range 8 {
			tags := map[string]string{"host": "h" + strconv.Itoa(h), "dc": []string{"a", "b", "c"}[h%3]}
			if pts := randomPoints(rng, 300, fromHour, toHour, h%3 == 2); len(pts) > 0 {
				s.put(t, "lz", tags, pts...)
			}
		}
	}
	write(0, 3)
	s.flushAll(t)
	write(3, 4)
	for h := range 4 {
		raw := s.raw[seriesName("lz", map[string]string{"host": "h" + strconv.Itoa(h*2), "dc": []string{"a", "b", "c"}[(h*2)%3]})]
		if raw == nil {
			continue
		}
		a := annotation.Annotation{TSUID: s.tsuidHex(t, raw), StartTime: int64(t0 + rng.IntN(4*3600)),
			Description: "n" + strconv.Itoa(h), Given: annotation.FieldDescription}
		if _, err := s.notes.Put(context.Background(), &a, false); err != nil {
			t.Fatal(err)
		}
	}
	eager := s.engineWith(t, read.PlanScan, false)
	opentsdb.SetEager(eager, true)
	lazy := []*opentsdb.Engine{s.engineWith(t, read.PlanScan, false), s.engineWith(t, read.PlanSeries, false)}
	aggs := []string{"sum", "avg", "min", "max", "dev", "zimsum", "p95", "last", "none"}
	var withNotes, bytes int
	defer func() { t.Logf("%d answers with annotations, %d bytes of dps compared", withNotes, bytes) }()
	for i := range *fusedIters {
		start := int64(t0 + rng.IntN(4*3600))
		end := start + 1 + int64(rng.IntN(4*3600))
		parts := []string{aggs[rng.IntN(len(aggs))]}
		if rng.IntN(3) == 0 {
			parts = append(parts, []string{"1m-avg", "7m-max-zero", "0all-sum"}[rng.IntN(3)])
		}
		if rng.IntN(4) == 0 {
			parts = append(parts, "rate")
		}
		gb := []string{"", "host=*", "dc=*", "dc=a|c"}[rng.IntN(4)]
		m := strings.Join(parts, ":") + ":lz{" + gb + "}"
		want := execBody(t, eager, sec(start), sec(end), m)
		withNotes += strings.Count(want, `"annotations"`)
		bytes += len(want)
		for k, e := range lazy {
			if got := execBody(t, e, sec(start), sec(end), m); got != want {
				t.Fatalf("query %d %s %d-%d, plan %d: lazy\n%s\neager\n%s", i, m, start, end, k, got, want)
			}
		}
	}
}

// TestOutputLimitPlanned: a filled downsampling whose groups × buckets
// pass the limit is refused by Stream (and Execute) before anything is
// read, with the bound in the error; under the limit it runs.
func TestOutputLimitPlanned(t *testing.T) {
	s := openStack(t, opentsdb.Options{MaxOutputPoints: 1000})
	fill(t, s)
	before := s.eng.Options().Reader.Stats()
	// 4 hosts × (3 h / 10 s + 2) buckets = 4,328 points.
	q := mquery(t, sec(t0), sec(t0+3*3600), "sum:10s-avg-zero:sys.cpu{host=*}")
	_, err := s.eng.Stream(context.Background(), q, opentsdb.JSONOptions{})
	var oe *opentsdb.OutputLimitError
	if !errors.As(err, &oe) || oe.Max != 1000 || oe.Bound != 4*(3*360+2) || !errors.Is(err, read.ErrLimit) {
		t.Fatalf("Stream: %v, want an *OutputLimitError with bound %d", err, 4*(3*360+2))
	}
	if _, err := s.eng.Execute(context.Background(), mquery(t, sec(t0), sec(t0+3*3600), "sum:10s-avg-zero:sys.cpu{host=*}")); !errors.As(err, &oe) {
		t.Fatalf("Execute: %v", err)
	}
	if after := s.eng.Options().Reader.Stats(); after.Rows != before.Rows || after.Gets != before.Gets || after.Scans != before.Scans {
		t.Errorf("the refused query read: before %+v after %+v", before, after)
	}
	// The groups are counted when the cheap bound (series × buckets) is
	// over: 2 data centres × 122 buckets is under 1,000.
	if _, _, err := streamAll(t, s.eng, mquery(t, sec(t0), sec(t0+2*3600), "sum:1m-avg-zero:sys.cpu{dc=*}"), opentsdb.JSONOptions{}, 100); err != nil {
		t.Errorf("2 groups × 122 buckets: %v", err)
	}
}

// TestOutputLimitWhileAnswering: a raw answer passing the limit stops
// with an *OutputLimitError once it has written part of the answer; the
// same query under the limit completes.
func TestOutputLimitWhileAnswering(t *testing.T) {
	s := openStack(t, opentsdb.Options{MaxOutputPoints: 300})
	fill(t, s)
	// none:sys.cpu answers 4 series of 180 (one of 165) points, one group
	// each: the limit passes in the second group.
	got, calls, err := streamAll(t, s.eng, mquery(t, sec(t0), sec(t0+3*3600), "none:sys.cpu"), opentsdb.JSONOptions{}, 1000)
	var oe *opentsdb.OutputLimitError
	if !errors.As(err, &oe) || oe.Max != 300 || oe.Bound != 0 {
		t.Fatalf("got %v after %d calls, want an *OutputLimitError", err, calls)
	}
	if calls < 2 || !strings.HasPrefix(got, `[{"metric":"sys.cpu"`) {
		t.Errorf("the limit stopped the answer at call %d, after %q; want it after the first group was written", calls, got)
	}
	if _, _, err := streamAll(t, s.eng, mquery(t, sec(t0), sec(t0+3600), "sum:sys.cpu{dc=*}"), opentsdb.JSONOptions{}, 1000); err != nil {
		t.Errorf("2 groups of 60 points: %v", err)
	}
}

// TestStreamTimeoutCountsRunning: the time between AppendJSON calls (the
// caller writing to a slow client) does not count against the query
// timeout; running past it does.
func TestStreamTimeoutCountsRunning(t *testing.T) {
	s := openStack(t, opentsdb.Options{Timeout: time.Second})
	fill(t, s)
	st, err := s.eng.Stream(context.Background(), mquery(t, sec(t0), sec(t0+3*3600), "none:sys.cpu"), opentsdb.JSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf []byte
	for calls := 0; ; calls++ {
		var done bool
		buf, done, err = st.AppendJSON(context.Background(), buf[:0], 2000)
		if err != nil {
			t.Fatalf("call %d: %v", calls, err)
		}
		if done {
			if calls < 3 {
				t.Fatalf("%d calls: the answer is too short to wait between its parts", calls)
			}
			break
		}
		time.Sleep(400 * time.Millisecond)
	}
	quick := openStack(t, opentsdb.Options{Timeout: time.Nanosecond})
	fill(t, quick)
	if _, _, err := streamAll(t, quick.eng, mquery(t, sec(t0), sec(t0+3*3600), "none:sys.cpu"), opentsdb.JSONOptions{}, 2000); !errors.Is(err, opentsdb.ErrTimeout) {
		t.Errorf("a 1 ns timeout: %v", err)
	}
}

// TestStreamMemoryOneGroup: a raw answer of many series, written in
// small parts, never holds more than one group's points (its input and
// its output), where Execute holds every group's.
func TestStreamMemoryOneGroup(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	const hosts, perHost = 50, 720
	for h := range hosts {
		pts := make([]series.Point, perHost)
		for i := range pts {
			pts[i] = series.IntPoint(int64(t0+10*i)*1000, int64(i%97))
		}
		s.put(t, "big", map[string]string{"host": "h" + strconv.Itoa(h)}, pts...)
	}
	s.flushAll(t)
	q := mquery(t, sec(t0), sec(t0+2*3600), "sum:big{host=*}")
	st, err := s.eng.Stream(context.Background(), q, opentsdb.JSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf []byte
	most := 0
	for {
		var done bool
		buf, done, err = st.AppendJSON(context.Background(), buf[:0], 4096)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, opentsdb.StreamHeldPoints(st))
		if done {
			break
		}
	}
	if most == 0 || most > 2*perHost {
		t.Fatalf("the stream held up to %d points at once, want at most one group's in and out (%d)", most, 2*perHost)
	}
}
