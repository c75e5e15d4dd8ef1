package promql_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	prom "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/schema"
)

// devopsSamples are TSBS devops cpu series as generated for
// VictoriaMetrics: cpu_usage_{user,system,idle} of host_0..host_4 every
// 10 s for 40 minutes.
func devopsSamples() []refSample {
	var out []refSample
	for h := range 5 {
		for m, name := range []string{"cpu_usage_user", "cpu_usage_system", "cpu_usage_idle"} {
			l := labels.FromStrings("__name__", name, "hostname", fmt.Sprintf("host_%d", h), "region", "eu-west-1")
			for i := range 240 {
				v := float64((i*7+h*13+m*29)%100) + 0.25*float64(m)
				out = append(out, refSample{l: l, t: refStart + int64(i)*10_000, v: v})
			}
		}
	}
	return out
}

// TestDelayedNameRemoval runs the TSBS devops query that groups by
// __name__ through tsd's engine with promql-delayed-name-removal, and
// through Prometheus's own engine with the same flag over Prometheus's
// tsdb holding the same samples: the answers are the same, instant and
// range. Without the flag both fail alike.
func TestDelayedNameRemoval(t *testing.T) {
	ctx := context.Background()
	samples := devopsSamples()
	ref := loadProm(ctx, t, samples)
	s := openStack(t, stackOptions{format: schema.FormatOpenTSDB})
	for _, x := range samples {
		mustOK(t, s.append(ctx, x.l, x.t, x.v))
	}
	mustOK(t, s.commit())
	mustOK(t, s.flushBefore(ctx, refStart+20*60_000))
	// The TSBS query, and one whose answer the flag changes: label_replace
	// still sees __name__ after max_over_time only with the flag.
	const tsbs = `max(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_3"}[1m])) by (__name__)`
	const renamed = `max by (name) (label_replace(max_over_time({__name__=~"cpu_(usage_user|usage_system)", hostname="host_3"}[1m]), "name", "$1", "__name__", "(.+)"))`
	quiet := slog.New(slog.DiscardHandler)
	for _, on := range []bool{false, true} {
		f, err := promql.ParseFeatures(map[bool]string{true: promql.FeatureDelayedNameRemoval}[on])
		mustOK(t, err)
		tsdEng := promql.NewEngine(promql.EngineOptions{Logger: quiet, Features: f})
		promEng := prom.NewEngine(prom.EngineOpts{Logger: quiet, MaxSamples: 50_000_000, Timeout: time.Minute,
			LookbackDelta: 5 * time.Minute, EnableAtModifier: true, EnableNegativeOffset: true, EnableDelayedNameRemoval: on})
		for _, q := range []string{tsbs, renamed} {
			at := refStart + 30*60_000
			want, got := instant(ctx, promEng, ref, q, at), instant(ctx, tsdEng, s.q, q, at)
			if msg := diffResults(want, got); msg != "" {
				t.Errorf("delayed name removal %v, instant %s: %s", on, q, msg)
			}
			wantR, gotR := rangeQ(ctx, promEng, ref, q, refStart, refStart+40*60_000), rangeQ(ctx, tsdEng, s.q, q, refStart, refStart+40*60_000)
			if msg := diffResults(wantR, gotR); msg != "" {
				t.Errorf("delayed name removal %v, range %s: %s", on, q, msg)
			}
			t.Logf("delayed name removal %v: %s: instant error %q, %d series; range error %q, %d series",
				on, q, got.err, len(got.series), gotR.err, len(gotR.series))
			if q != renamed {
				continue
			}
			switch {
			case !on && !strings.Contains(got.err, "vector cannot contain metrics with the same labelset"):
				t.Errorf("without the flag: %+v, want the same-labelset error", got)
			case on && (len(gotR.series) != 2 || len(got.series) != 2):
				t.Errorf("with the flag: %+v, want cpu_usage_user and cpu_usage_system", got)
			}
		}
	}
}

// TestParseFeatures: Prometheus's names, unknown names refused, and the
// parser's features set and reset for the process.
func TestParseFeatures(t *testing.T) {
	f, err := promql.ParseFeatures(" promql-experimental-functions,,promql-duration-expr ")
	if err != nil || !f.ExperimentalFunctions || !f.DurationExpr || f.DelayedNameRemoval {
		t.Fatalf("ParseFeatures = %+v, %v", f, err)
	}
	if got := f.String(); got != "promql-experimental-functions,promql-duration-expr" {
		t.Errorf("String = %q", got)
	}
	if _, err := promql.ParseFeatures("promql-nope"); err == nil || !strings.Contains(err.Error(), `"promql-nope"`) {
		t.Errorf("unknown feature: %v", err)
	}
	exprs := []string{`sort_by_label(up, "job")`, `rate(up[5m * 2])`}
	defer promql.SetParserFeatures(promql.Features{})
	for _, on := range []bool{false, true} {
		promql.SetParserFeatures(promql.Features{ExperimentalFunctions: on, DurationExpr: on})
		for _, e := range exprs {
			if _, err := parser.ParseExpr(e); (err == nil) != on {
				t.Errorf("features %v: ParseExpr(%s) = %v", on, e, err)
			}
		}
	}
}
