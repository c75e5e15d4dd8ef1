package opentsdb_test

import (
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// putOrderSeries writes the order data set: twelve series of "ord" whose
// tag-key sets differ ({host}, {host,rack}, {host,dc}, and one without
// tags), written in an order unlike their TSUIDs' so that neither the
// series ids nor the names' UIDs follow TSUID order. Points sit every 30 s
// with gaps that differ per series, half the hour flushed to the store.
func putOrderSeries(t testing.TB, s *stack) {
	var all []map[string]string
	for i := range 11 {
		tags := map[string]string{"host": "h" + strconv.Itoa((i*7)%11)}
		switch i % 3 {
		case 1:
			tags["rack"] = "r" + strconv.Itoa(i%2)
		case 2:
			tags["dc"] = "d" + strconv.Itoa(i%4)
		}
		all = append(all, tags)
	}
	all = append(all[:5], append([]map[string]string{{}}, all[5:]...)...)
	put := func(from, to int) {
		for k, tags := range all {
			var pts []series.Point
			for i := from; i < to; i++ {
				if (i+k)%(k+2) == 0 {
					continue
				}
				pts = append(pts, series.IntPoint(int64(t0+30*i)*1000, int64((i*31+k*17)%97-40)))
			}
			s.put(t, "ord", tags, pts...)
		}
	}
	put(0, 60)
	s.flushAll(t)
	put(60, 120)
}

// TestQueryGroupOrder checks first, last and diff, which depend on the
// order of a group's series, against the reference walking each group in
// TSUID order as OpenTSDB does, with and without downsampling and
// grouping, on every read path, and that repeated queries answer the same
// bytes.
func TestQueryGroupOrder(t *testing.T) {
	for _, o := range []struct {
		name        string
		fuse, eager bool
	}{{"lazy", true, false}, {"eager", true, true}, {"unfused", false, false}} {
		t.Run(o.name, func(t *testing.T) {
			s := openStack(t, opentsdb.Options{})
			opentsdb.SetFuse(s.eng, o.fuse)
			opentsdb.SetEager(s.eng, o.eager)
			putOrderSeries(t, s)
			start, end := int64(t0+45), int64(t0+3600-15)
			for _, agg := range []string{"first", "last", "diff"} {
				for _, c := range []struct {
					m    string
					spec refSpec
				}{
					{agg + ":ord", refSpec{metric: "ord", agg: agg}},
					{agg + ":ord{host=*}", refSpec{metric: "ord", agg: agg, filters: []tsquery.Filter{filt("wildcard", "host", "*", true)}}},
					{agg + ":2m-avg:ord", refSpec{metric: "ord", agg: agg, dsInterval: 120000, dsAgg: "avg"}},
					{agg + ":1m-sum-zero:ord", refSpec{metric: "ord", agg: agg, dsInterval: 60000, dsAgg: "sum", dsFill: "zero"}},
				} {
					c.spec.start, c.spec.end = start*1000, end*1000
					q := mquery(t, sec(start), sec(end), c.m)
					compare(t, c.m, s.exec(t, q), refRun(t, s, c.spec), false)
					first := s.execJSON(t, q)
					for i := range 20 {
						if got := s.execJSON(t, q); got != first {
							t.Fatalf("%s: run %d answered\n%s\nafter\n%s", c.m, i, got, first)
						}
					}
				}
			}
		})
	}
}
