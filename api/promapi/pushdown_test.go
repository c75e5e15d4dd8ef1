package promapi

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	tsdpromql "github.com/tsd-db/tsd/query/promql"
)

// markQueryable passes a tsdb's Selects through and records whether
// their contexts were marked for pushdown.
type markQueryable struct {
	storage.Queryable
	mu     sync.Mutex
	marked []bool
}

func (m *markQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := m.Queryable.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return markQuerier{q, m}, nil
}

type markQuerier struct {
	storage.Querier
	m *markQueryable
}

func (q markQuerier) Select(ctx context.Context, sorted bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	q.m.mu.Lock()
	q.m.marked = append(q.m.marked, tsdpromql.PushdownMarked(ctx))
	q.m.mu.Unlock()
	return q.Querier.Select(ctx, sorted, hints, ms...)
}

// TestQueriesMarkPushdown: instant and range queries run on a context
// marked for range-function pushdown, unless they hold a subquery.
func TestQueriesMarkPushdown(t *testing.T) {
	mq := &markQueryable{Queryable: openDB(t)}
	base := serveAPI(t, mq)
	for _, tc := range []struct {
		path, query string
		marked      bool
	}{
		{"/api/v1/query", `max_over_time(temp[1m])`, true},
		{"/api/v1/query_range", `max_over_time(temp[1m])`, true},
		{"/api/v1/query_range", `max_over_time(temp[1m:15s])`, false},
	} {
		mq.marked = nil
		code, body := call(t, http.MethodGet, base+tc.path,
			vals("query", tc.query, "time", "1700000300", "start", "1700000000", "end", "1700000300", "step", "60"))
		if code != 200 || len(mq.marked) != 1 || mq.marked[0] != tc.marked {
			t.Errorf("%s %s: %d %s, marked %v, want [%v]", tc.path, tc.query, code, body, mq.marked, tc.marked)
		}
	}
}
