package promql_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/promql"
)

// TestWithPushdownRewritesWindows: WithPushdown replaces a range
// function's call by its selector exactly where every window is pushed
// down and no earlier window's sample is within the lookback, and the
// answers are the engine's own over raw samples: names dropped or kept
// as the call does, offsets, @, instants, operators over the result, a
// second call on the same statement, a user's matcher that reads like
// the marker, and the delayed-name-removal feature, under which nothing
// is rewritten.
func TestWithPushdownRewritesWindows(t *testing.T) {
	s := smallStack(t, stackOptions{})
	ctx := context.Background()
	plain := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		expr    string
		step    time.Duration // 0: an instant query at 7 h
		rewrite bool
	}{
		{`avg_over_time(up[1h])`, time.Hour, true},
		{`max by (job) (max_over_time(up[30m]))`, time.Hour, true},
		{`last_over_time(up[1h])`, time.Hour, true},
		{`min_over_time(up[1h] offset 30m) / 2`, time.Hour, true},
		{`-sum_over_time(up[1h] @ 7200)`, time.Hour, true},
		{`label_replace(avg_over_time(up[1h]), "n", "$1", "__name__", "(.*)")`, time.Hour, true},
		{`label_replace(avg_over_time(up[1h]), "__name__", "$1", "__name__", "(.+)")`, time.Hour, false}, // writes the name: KeepGroupedNames's
		{`avg_over_time(up[1h])`, 0, true},
		{`sum_over_time(up[10m])`, 5 * time.Minute, false},                                        // step below the range: not pushed down
		{`sum_over_time(up[2m])`, 2 * time.Minute, true},                                          // steps within the lookback (5m): staleness markers fill
		{`sum_over_time(up[1m] offset 1s)`, 90 * time.Second, true},                               // empty windows between samples
		{`present_over_time(up[1h])`, time.Hour, false},                                           // its sample is not its value
		{`avg_over_time({__name__=~"up|other"}[1h])`, time.Hour, false},                           // no metric name to drop safely
		{`avg_over_time(up{__tsd_window__="avg_over_time 3600000 300000"}[1h])`, time.Hour, true}, // the marker is known by address: this one matches nothing
	} {
		before := s.q.Stats().WindowSelects
		var want, got normResult
		if c.step == 0 {
			want = instant(ctx, plain, s.q, c.expr, 7*hour)
			got = instant(ctx, pushdownEngine{plain}, s.q, c.expr, 7*hour)
		} else {
			want = rangeStep(ctx, plain, s.q, c.expr, hour, 9*hour, c.step)
			got = rangeStep(ctx, pushdownEngine{plain}, s.q, c.expr, hour, 9*hour, c.step)
		}
		if msg := diffWith(want, got, identical); msg != "" {
			t.Errorf("%s step %v: %s", c.expr, c.step, msg)
		}
		if rewritten := s.q.Stats().WindowSelects > before; rewritten != c.rewrite {
			t.Errorf("%s step %v: rewritten %v, want %v", c.expr, c.step, rewritten, c.rewrite)
		}
		if want.err != "" || (len(want.series) == 0) != (c.expr == `avg_over_time(up{__tsd_window__="avg_over_time 3600000 300000"}[1h])`) {
			t.Errorf("%s step %v: %d series, error %q", c.expr, c.step, len(want.series), want.err)
		}
	}

	// Marked twice: the second call finds nothing more to rewrite, and
	// the selector still reads its windows.
	const e = `avg by (job) (avg_over_time(up[1h]))`
	want := rangeStep(ctx, plain, s.q, e, hour, 9*hour, time.Hour)
	qry, err := plain.NewRangeQuery(ctx, s.q, nil, e, time.UnixMilli(hour), time.UnixMilli(9*hour), time.Hour)
	mustOK(t, err)
	promql.WithPushdown(ctx, s.q, qry.Statement())
	twice := normalize(qry.Exec(promql.WithPushdown(ctx, s.q, qry.Statement())))
	qry.Close()
	if msg := diffWith(want, twice, identical); msg != "" {
		t.Errorf("marked twice: %s", msg)
	}

	// With delayed name removal the engine keeps the name to the end
	// (label_replace sees it): nothing is rewritten.
	delayed, err := promql.New(&promql.Options{Reader: s.reader, Index: s.index, UIDs: s.uids, DelayedNameRemoval: true})
	mustOK(t, err)
	engD := promql.NewEngine(promql.EngineOptions{Logger: slog.New(slog.DiscardHandler), Features: promql.Features{DelayedNameRemoval: true}})
	const named = `label_replace(avg_over_time(up[1h]), "n", "$1", "__name__", "(.*)")`
	wantD := rangeStep(ctx, engD, delayed, named, hour, 9*hour, time.Hour)
	gotD := rangeStep(ctx, pushdownEngine{engD}, delayed, named, hour, 9*hour, time.Hour)
	if msg := diffWith(wantD, gotD, identical); msg != "" {
		t.Errorf("delayed name removal: %s", msg)
	}
	if st := delayed.Stats(); st.WindowSelects != 0 || st.PushdownSelects == 0 {
		t.Errorf("delayed name removal: stats %+v, want pushdown without window selectors", st)
	}
	if len(wantD.series) == 0 || !strings.Contains(wantD.series[0].labels, `n="up"`) {
		t.Fatalf("delayed name removal: %+v", wantD)
	}
}
