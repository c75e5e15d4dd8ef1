package pebble

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// TestSingleVersionDeleteIsPointTombstone: deleting one version of a
// column writes a point tombstone, a wider time range a range tombstone.
// Range tombstones in the memtable are re-fragmented by every new
// iterator, so the compactor's exact-version deletes must not make them.
func TestSingleVersionDeleteIsPointTombstone(t *testing.T) {
	col := []byte("row\x00t\x00q")
	for _, tc := range []struct {
		minT, maxT int64
		want       pebble.InternalKeyKind
	}{
		{5_000_000, 5_001_000, pebble.InternalKeyKindDelete},
		{4_999_001, 5_000_001, pebble.InternalKeyKindDelete}, // holds only 5,000 ms
		{5_000_000, 5_002_000, pebble.InternalKeyKindRangeDelete},
		{0, 5_000_000, pebble.InternalKeyKindRangeDelete},
	} {
		b := new(pebble.Batch)
		kb := &keyBuf{}
		if err := deleteColumn(b, kb, col, tc.minT, tc.maxT); err != nil {
			t.Fatal(err)
		}
		r := b.Reader()
		kind, key, _, ok, err := r.Next()
		if !ok || err != nil || kind != tc.want {
			t.Fatalf("[%d, %d): kind %v ok %v err %v, want %v", tc.minT, tc.maxT, kind, ok, err, tc.want)
		}
		if kind == pebble.InternalKeyKindDelete && string(key) != string(appendTimestamp(col, 5_000_000)) {
			t.Fatalf("[%d, %d): deleted key %x", tc.minT, tc.maxT, key)
		}
	}
}
