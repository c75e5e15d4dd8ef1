package read

import (
	"fmt"
	"testing"

	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/series"
)

// TestSeriesRecordsBoundApart: series records are bounded on their own:
// recording more series than a shard's byte bound holds empties only the
// series records, never the rows the trust index found by Get, which
// point to the same entries.
func TestSeriesRecordsBoundApart(t *testing.T) {
	entry := func(key string) *cacheEntry {
		return &cacheEntry{key: []byte(key), pts: make([]series.Point, 100)}
	}
	one := entry("k").size()
	ti := newTrustIndex(&changes.Tracker{}, 4*one) // four entries a shard
	rowKey := []byte("row")
	e := entry("row")
	ti.record(rowKey, e, ti.gen())
	var kept int
	for i := range 200 { // far past four a shard
		tsuid := fmt.Appendf(nil, "series-%d", i)
		ti.recordSeries(&trustedSeries{tsuid: tsuid, stored: []*cacheEntry{e}})
		if ti.findSeries(tsuid) != nil {
			kept++
		}
	}
	if got, _ := ti.find(rowKey, 0); got != e {
		t.Fatal("recording series emptied the trust index's rows")
	}
	if kept != 200 {
		t.Fatalf("%d of 200 series found right after recording, want all", kept)
	}
	var held int
	for i := range 200 {
		if ti.findSeries(fmt.Appendf(nil, "series-%d", i)) != nil {
			held++
		}
	}
	if held > trustShards*4 {
		t.Fatalf("%d series records held, want at most %d (four a shard)", held, trustShards*4)
	}
}
