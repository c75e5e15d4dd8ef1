package opentsdb_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage/storagetest"
)

// TestRollupRowsCutIntoBatches reads rollup rows that every scan of the
// rollup tables delivers a cell at a time, as a row larger than the
// scan's byte bound arrives, under the scan plan in both formats: the
// scan gathers a row's batches before decoding it, so every answer is
// still the raw one.
func TestRollupRowsCutIntoBatches(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			e := openRollupEnvPlan(t, format, nil, read.PlanScan)
			for i, tbl := range e.ro.Tables {
				if tbl != nil {
					e.ro.Tables[i] = storagetest.CutRows(tbl, 1)
				}
			}
			e.restart(t)
			for h := range 3 {
				pts := make([]series.Point, 3*48)
				for i := range pts {
					pts[i] = series.IntPoint(int64(d0+1200*i+60*h)*1000, int64(i*7+h)%100)
				}
				e.s.put(t, "roll", map[string]string{"host": "h" + strconv.Itoa(h)}, pts...)
			}
			e.s.flushAll(t)
			for _, c := range []struct{ m, raw, table string }{
				{"sum:1h-avg:roll{host=*}", "sum:rollup_raw:1h-avg:roll{host=*}", "tsdb-rollup-1h"},
				{"sum:1h-max:roll", "sum:rollup_raw:1h-max:roll", "tsdb-rollup-1h"},
				{"sum:1d-sum:roll{host=*}", "sum:rollup_raw:1d-sum:roll{host=*}", "tsdb-rollup-1d"},
			} {
				if body := e.execBody(t, c.m, d0, d0+2*86400-1, true); !strings.Contains(body, `"table":"`+c.table+`"`) {
					t.Fatalf("%s: want table %s in %s", c.m, c.table, body)
				}
				got := e.execBody(t, c.m, d0, d0+2*86400-1, false)
				want := e.execBody(t, c.raw, d0, d0+2*86400-1, false)
				if err := sameAnswer(got, want); err != nil || !strings.Contains(got, `"dps":{"`) {
					t.Errorf("%s: %v\nrollups: %s\nraw:     %s", c.m, err, got, want)
				}
			}
		})
	}
}
