package promapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"
)

// openCollidingDB holds cpu_a{host="h"} = 1 and cpu_b{host="h"} = 2,
// sampled every 15 s from t0 for 10 minutes: two series whose labels
// differ only by their names.
func openCollidingDB(t *testing.T) *tsdb.DB {
	t.Helper()
	db := openEmptyDB(t)
	app := db.Appender(context.Background())
	for i := range 41 {
		for j, name := range []string{"cpu_a", "cpu_b"} {
			if _, err := app.Append(0, labels.FromStrings("__name__", name, "host", "h"), int64(t0+i*15_000), float64(j+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestKeepGroupedNames: an aggregation by __name__ over max_over_time of
// two series that differ only by their names, as TSBS asks
// VictoriaMetrics, fails as in Prometheus without Options.NamesEngine and
// gets one series per name with it, instant and range; a query by name
// that Prometheus answers keeps Prometheus's answer (no name) either way.
func TestKeepGroupedNames(t *testing.T) {
	db := openCollidingDB(t)
	quiet := slog.New(slog.DiscardHandler)
	names := promql.NewEngine(promql.EngineOpts{Logger: quiet, MaxSamples: DefaultMaxSamples, Timeout: time.Minute,
		LookbackDelta: DefaultLookbackDelta, EnableDelayedNameRemoval: true})
	t.Cleanup(func() { names.Close() })
	plain := serveOptions(t, Options{Queryable: db, Logger: quiet})
	keep := serveOptions(t, Options{Queryable: db, Logger: quiet, NamesEngine: names})

	const tsbs = `max(max_over_time({__name__=~"cpu_.*", host="h"}[1m])) by (__name__)`
	at := strconv.Itoa(t0/1000 + 300)
	instant := vals("query", tsbs, "time", at)
	rng := vals("query", tsbs, "start", strconv.Itoa(t0/1000+60), "end", at, "step", "60")

	code, body := call(t, http.MethodGet, plain+"/api/v1/query", instant)
	if code != 422 || !strings.Contains(body, "vector cannot contain metrics with the same labelset") {
		t.Errorf("without NamesEngine: %d %s, want Prometheus's 422", code, body)
	}
	code, body = call(t, http.MethodGet, keep+"/api/v1/query", instant)
	want := `"result":[{"metric":{"__name__":"cpu_a"},"value":[` + at + `,"1"]},{"metric":{"__name__":"cpu_b"},"value":[` + at + `,"2"]}]`
	if code != 200 || !strings.Contains(body, want) {
		t.Errorf("with NamesEngine: %d %s, want %s", code, body, want)
	}
	code, body = call(t, http.MethodGet, keep+"/api/v1/query_range", rng)
	if code != 200 || !strings.Contains(body, `{"metric":{"__name__":"cpu_a"},"values":[[`+strconv.Itoa(t0/1000+60)+`,"1"],`) ||
		!strings.Contains(body, `{"metric":{"__name__":"cpu_b"},"values":[[`) || strings.Count(body, `"2"]`) != 5 {
		t.Errorf("range with NamesEngine: %d %s", code, body)
	}

	// One name selected: nothing collides, and both answer as Prometheus
	// does, the name dropped.
	one := vals("query", `max(max_over_time({__name__=~"cpu_b"}[1m])) by (__name__)`, "time", at)
	for _, base := range []string{plain, keep} {
		code, body := call(t, http.MethodGet, base+"/api/v1/query", one)
		if want := `"result":[{"metric":{},"value":[` + at + `,"2"]}]`; code != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want %s", base, code, body, want)
		}
	}
}
