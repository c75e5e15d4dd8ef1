package index

import (
	"slices"
	"sync"
	"testing"
)

// TestOnNewSeries: the hook sees each series once, when it is new to
// the index (single and batch registrations), and never a known one.
func TestOnNewSeries(t *testing.T) {
	s := openMemStore(t)
	var mu sync.Mutex
	var seen [][]byte
	o := manual()
	o.OnNewSeries = func(tsuid []byte) {
		mu.Lock()
		seen = append(seen, slices.Clone(tsuid))
		mu.Unlock()
	}
	ix := s.open(t, o)
	if err := ix.RegisterSeries(rawTSUID(1)); err != nil {
		t.Fatal(err)
	}
	if err := ix.RegisterSeriesBatch(append(rawTSUIDs(1, 3), rawTSUID(2))); err != nil {
		t.Fatal(err)
	}
	if err := ix.RegisterSeries(rawTSUID(3)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("hook saw %d series, want 3 (each once): %x", len(seen), seen)
	}
	slices.SortFunc(seen, func(a, b []byte) int { return slices.Compare(a, b) })
	for i, k := range seen {
		if !slices.Equal(k, rawTSUID(i+1)) {
			t.Errorf("series %d: %x, want %x", i, k, rawTSUID(i+1))
		}
	}
}
