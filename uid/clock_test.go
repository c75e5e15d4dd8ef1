package uid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLRUEvictsLeastRecent(t *testing.T) {
	var c nameCache
	c.init(3) // one shard of 3
	for i, n := range []string{"a", "b", "c"} {
		c.put(n, ID(i+1))
	}
	if _, ok := c.get([]byte("a")); !ok { // a becomes most recent
		t.Fatal("a missing")
	}
	c.put("d", 4) // evicts b, the least recent
	if _, ok := c.get([]byte("b")); ok {
		t.Error("b survived eviction")
	}
	for _, n := range []string{"a", "c", "d"} {
		if _, ok := c.get([]byte(n)); !ok {
			t.Errorf("%s evicted", n)
		}
	}
	c.remove("c")
	c.put("e", 5) // reuses the removed slot: nothing evicted
	st := c.stats()
	want := CacheStats{Entries: 3, Limit: 3, Hits: 4, Misses: 1, Evictions: 1}
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	c.reset()
	if st := c.stats(); st.Entries != 0 || st.Hits != 4 {
		t.Errorf("after reset %+v", st)
	}
}

// TestLRUModel compares one shard with a slice-based LRU under random
// operations.
func TestLRUModel(t *testing.T) {
	const limit = 8
	var c idCache
	c.init(limit)
	if len(c.shards) != 1 {
		t.Fatalf("%d shards for %d entries", len(c.shards), limit)
	}
	var model []ID // most recent last
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 20000; step++ {
		id := ID(rng.IntN(20))
		i := slices.Index(model, id)
		switch rng.IntN(3) {
		case 0:
			name, ok := c.get(id)
			if ok != (i >= 0) || (ok && name != fmt.Sprint(id)) {
				t.Fatalf("step %d get %d = %q %v, model %v", step, id, name, ok, model)
			}
			if ok {
				model = append(slices.Delete(model, i, i+1), id)
			}
		case 1:
			c.put(id, fmt.Sprint(id))
			if i >= 0 {
				model = slices.Delete(model, i, i+1)
			} else if len(model) == limit {
				model = model[1:]
			}
			model = append(model, id)
		case 2:
			c.remove(id)
			if i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
		}
		if st := c.stats(); st.Entries != len(model) {
			t.Fatalf("step %d: %d entries, model %d", step, st.Entries, len(model))
		}
	}
}

func TestShardCount(t *testing.T) {
	for _, tc := range []struct{ size, want int }{{1, 1}, {31, 1}, {32, 2}, {1000, 32}, {1 << 20, 64}} {
		if got := shardCount(tc.size); got != tc.want {
			t.Errorf("shardCount(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
	var c nameCache
	c.init(1000)
	total := 0
	for i := range c.shards {
		total += c.shards[i].mu.l.limit
	}
	if total < 1000 || total > 1000+len(c.shards) {
		t.Errorf("shard limits sum to %d for size 1000", total)
	}
}
