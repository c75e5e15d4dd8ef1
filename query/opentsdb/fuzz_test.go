package opentsdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/query/tsquery"
)

// FuzzExecute runs m= sub-queries over a small store: whatever the
// parser accepts must execute to valid JSON or fail as a bad request or
// a crossed limit, never otherwise.
func FuzzExecute(f *testing.F) {
	for _, m := range []string{
		"sum:sys.cpu", "avg:sys.cpu{host=*}", "sum:5m-avg-nan:sys.cpu{dc=*}{host=web*}", "max:rate{counter,10}:net.bytes",
		"none:sys.cpu{host=*}", "sum:0all-sum:temp", "p99:1h-max-null:sys.cpu", "sum:sys.cpu{host=regexp(w.+)}",
		"dev:10m-count-zero:explicit_tags:sys.cpu{host=*,dc=*}", "mimmax:1mc-first:ms.metric",
	} {
		f.Add(m, int64(600), int64(7200))
	}
	s := openStack(f, opentsdb.Options{Limits: read.Limits{MaxPoints: 5000}})
	fill(f, s)
	f.Fuzz(func(t *testing.T, m string, from, span int64) {
		sq, err := tsquery.ParseM(m)
		if err != nil {
			return
		}
		q := &tsquery.TSQuery{Start: strconv.FormatInt(t0+from%20000, 10), End: strconv.FormatInt(t0+from%20000+span%20000, 10),
			Queries: []*tsquery.SubQuery{sq}}
		res, err := s.eng.Execute(context.Background(), q)
		if err != nil {
			if !errors.Is(err, tsquery.ErrBadRequest) && !errors.Is(err, read.ErrLimit) {
				t.Fatalf("%s: %v", m, err)
			}
			return
		}
		defer res.Release()
		for _, arrays := range []bool{false, true} {
			if b := res.AppendJSON(nil, opentsdb.JSONOptions{Arrays: arrays}); !json.Valid(b) {
				t.Fatalf("%s: invalid JSON %s", m, b)
			}
		}
	})
}
