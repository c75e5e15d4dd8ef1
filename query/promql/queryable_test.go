package promql_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
)

const hour = 3_600_000

// smallStack holds four series with a point a minute over ten hours, the
// first eight flushed to the store.
func smallStack(t *testing.T, o stackOptions) *stack {
	t.Helper()
	s := openStack(t, o)
	ctx := context.Background()
	sets := []labels.Labels{
		labels.FromStrings("__name__", "up", "job", "a", "instance", "1"),
		labels.FromStrings("__name__", "up", "job", "b", "instance", "2"),
		labels.FromStrings("__name__", "up", "job", "a b", "zone", "x"),
		labels.FromStrings("__name__", "other", "job", "a"),
	}
	for i, l := range sets {
		for m := range int64(600) {
			mustOK(t, s.append(ctx, l, m*60_000, float64(i*1000)+float64(m)))
		}
	}
	mustOK(t, s.commit())
	mustOK(t, s.flushBefore(ctx, 8*hour))
	return s
}

func selectLabels(t testing.TB, q storage.Queryable, sorted bool, ms ...*labels.Matcher) []string {
	t.Helper()
	qr, err := q.Querier(0, 10*hour)
	mustOK(t, err)
	defer qr.Close()
	ss := qr.Select(context.Background(), sorted, nil, ms...)
	var out []string
	for ss.Next() {
		out = append(out, ss.At().Labels().String())
	}
	mustOK(t, ss.Err())
	return out
}

func TestSelectMatchers(t *testing.T) {
	s := smallStack(t, stackOptions{})
	m := labels.MustNewMatcher
	const (
		a1  = `{__name__="up", instance="1", job="a"}`
		b2  = `{__name__="up", instance="2", job="b"}`
		ab  = `{__name__="up", job="a b", zone="x"}`
		oth = `{__name__="other", job="a"}`
	)
	for _, c := range []struct {
		ms   []*labels.Matcher
		want []string
	}{
		{[]*labels.Matcher{m(labels.MatchEqual, "__name__", "up")}, []string{a1, b2, ab}},
		{[]*labels.Matcher{m(labels.MatchEqual, "__name__", "nope")}, nil},
		{[]*labels.Matcher{m(labels.MatchEqual, "job", "a")}, []string{oth, a1}},
		{[]*labels.Matcher{m(labels.MatchNotEqual, "job", "a")}, []string{b2, ab}},
		{[]*labels.Matcher{m(labels.MatchRegexp, "job", "a.*")}, []string{oth, a1, ab}},
		{[]*labels.Matcher{m(labels.MatchRegexp, "job", "a.b")}, []string{ab}},
		{[]*labels.Matcher{m(labels.MatchNotRegexp, "__name__", "u.")}, []string{oth}},
		{[]*labels.Matcher{m(labels.MatchEqual, "zone", "")}, []string{oth, a1, b2}},
		{[]*labels.Matcher{m(labels.MatchRegexp, "instance", "1|")}, []string{oth, a1, ab}},
		{[]*labels.Matcher{m(labels.MatchEqual, "nolabel", "")}, []string{oth, a1, b2, ab}},
		{[]*labels.Matcher{m(labels.MatchEqual, "nolabel", "x")}, nil},
		{[]*labels.Matcher{m(labels.MatchNotEqual, "nolabel", "x"), m(labels.MatchEqual, "instance", "2")}, []string{b2}},
		{[]*labels.Matcher{m(labels.MatchRegexp, "__name__", ".+"), m(labels.MatchNotRegexp, "job", "a")}, []string{b2, ab}},
	} {
		got := selectLabels(t, s.q, true, c.ms...)
		if !slices.Equal(got, c.want) {
			t.Errorf("Select(%v) = %q, want %q", c.ms, got, c.want)
		}
	}
}

// TestIteratorLazy seeks into the last flushed hour: the read must fetch
// the rows from there on, not the whole series.
func TestIteratorLazy(t *testing.T) {
	s := smallStack(t, stackOptions{})
	qr, err := s.q.Querier(0, 10*hour)
	mustOK(t, err)
	ss := qr.Select(context.Background(), false, &storage.SelectHints{Start: 0, End: 10 * hour},
		labels.MustNewMatcher(labels.MatchEqual, "instance", "2"))
	if !ss.Next() {
		t.Fatalf("no series: %v", ss.Err())
	}
	before := s.reader.Stats().Gets
	it := ss.At().Iterator(nil)
	if vt := it.Seek(7*hour + 30*60_000); vt != chunkenc.ValFloat {
		t.Fatalf("Seek = %v", vt)
	}
	if gets := s.reader.Stats().Gets - before; gets > 2 {
		t.Errorf("Seek into hour 7 read %d rows, want at most 2", gets)
	}
	if ts, v := it.At(); ts != 7*hour+30*60_000 || v != 1000+450 {
		t.Errorf("At = %d %v", ts, v)
	}
	n := 1
	for it.Next() == chunkenc.ValFloat {
		n++
	}
	mustOK(t, it.Err())
	if want := 600 - 450; n != want {
		t.Errorf("%d samples from the seek on, want %d", n, want)
	}
}

func TestIteratorContract(t *testing.T) {
	pts := []series.Point{series.IntPoint(10, 7), {T: 20, Bits: series.StaleNaN, Kind: series.Float64},
		series.Float32Point(30, 1.5)}
	it := promql.NewIterator(series.NewSliceIterator(nil, pts))
	if it.Seek(5) != chunkenc.ValFloat || it.AtT() != 10 {
		t.Fatalf("Seek(5) at %d", it.AtT())
	}
	if _, v := it.At(); v != 7 {
		t.Errorf("int point = %v", v)
	}
	if it.Seek(1) != chunkenc.ValFloat || it.AtT() != 10 {
		t.Errorf("Seek backwards moved to %d", it.AtT())
	}
	if it.Next() != chunkenc.ValFloat {
		t.Fatal("Next ended early")
	}
	if _, v := it.At(); math.Float64bits(v) != value.StaleNaN {
		t.Errorf("stale marker = %x", math.Float64bits(v))
	}
	if it.Seek(25) != chunkenc.ValFloat || it.AtT() != 30 {
		t.Errorf("Seek(25) at %d", it.AtT())
	}
	if it.Seek(31) != chunkenc.ValNone || it.Next() != chunkenc.ValNone || it.Seek(0) != chunkenc.ValNone {
		t.Error("iterator not exhausted after the last point")
	}
	mustOK(t, it.Err())
}

func TestLimits(t *testing.T) {
	for _, c := range []struct {
		lim  read.Limits
		name string
	}{{read.Limits{MaxPoints: 100}, "data points"}, {read.Limits{MaxSeries: 2}, "series"}} {
		s := smallStack(t, stackOptions{limits: c.lim})
		eng := promql.NewEngine(promql.EngineOptions{})
		qry, err := eng.NewRangeQuery(context.Background(), s.q, nil, `up`, timeAt(0), timeAt(10*hour), 60e9)
		mustOK(t, err)
		res := qry.Exec(context.Background())
		var le *read.LimitError
		if !errors.As(res.Err, &le) || le.Limit != c.name {
			t.Errorf("%+v: query error %v, want the %s limit", c.lim, res.Err, c.name)
		}
		qry.Close()
	}
}

func TestLabelNamesValues(t *testing.T) {
	s := smallStack(t, stackOptions{})
	qr, err := s.q.Querier(0, 10*hour)
	mustOK(t, err)
	ctx := context.Background()
	names, _, err := qr.LabelNames(ctx, nil)
	mustOK(t, err)
	if want := []string{"__name__", "instance", "job", "zone"}; !slices.Equal(names, want) {
		t.Errorf("LabelNames = %q, want %q", names, want)
	}
	names, _, err = qr.LabelNames(ctx, &storage.LabelHints{Limit: 2}, labels.MustNewMatcher(labels.MatchEqual, "job", "a"))
	mustOK(t, err)
	if want := []string{"__name__", "instance"}; !slices.Equal(names, want) {
		t.Errorf("LabelNames(job=a, limit 2) = %q, want %q", names, want)
	}
	vals, _, err := qr.LabelValues(ctx, "job", nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"))
	mustOK(t, err)
	if want := []string{"a", "a b", "b"}; !slices.Equal(vals, want) {
		t.Errorf("LabelValues(job) = %q, want %q", vals, want)
	}
	vals, _, err = qr.LabelValues(ctx, "__name__", nil)
	mustOK(t, err)
	if want := []string{"other", "up"}; !slices.Equal(vals, want) {
		t.Errorf("LabelValues(__name__) = %q, want %q", vals, want)
	}
}

func TestOptionsValidate(t *testing.T) {
	s := smallStack(t, stackOptions{})
	good := promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids}
	if _, err := promql.New(&good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(o *promql.Options){
		func(o *promql.Options) { o.Reader = nil },
		func(o *promql.Options) { o.Index = nil },
		func(o *promql.Options) { o.UIDs = nil },
		func(o *promql.Options) { o.LabelCacheSize = -1 },
		func(o *promql.Options) { o.Limits.MaxPoints = -1 },
	} {
		o := good
		bad(&o)
		if _, err := promql.New(&o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
}

func timeAt(ms int64) time.Time { return time.UnixMilli(ms) }

// TestSelectShards: the shards of a selection partition it.
func TestSelectShards(t *testing.T) {
	s := smallStack(t, stackOptions{})
	qr, err := s.q.Querier(0, 10*hour)
	mustOK(t, err)
	all := selectLabels(t, s.q, true, labels.MustNewMatcher(labels.MatchRegexp, "job", ".+"))
	var union []string
	for i := range uint64(3) {
		ss := qr.Select(context.Background(), true, &storage.SelectHints{End: 10 * hour, ShardCount: 3, ShardIndex: i},
			labels.MustNewMatcher(labels.MatchRegexp, "job", ".+"))
		for ss.Next() {
			union = append(union, ss.At().Labels().String())
		}
		mustOK(t, ss.Err())
	}
	slices.Sort(union)
	slices.Sort(all)
	if !slices.Equal(union, all) || len(all) != 4 {
		t.Errorf("shards hold %q, want %q", union, all)
	}
}
