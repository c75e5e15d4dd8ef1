package uid

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestCacheEvictsUnreferenced(t *testing.T) {
	var c nameCache
	c.init(3) // one shard of 3
	for i, n := range []string{"a", "b", "c"} {
		c.put(n, ID(i+1))
	}
	if _, ok := c.get([]byte("a")); !ok { // a gets its second chance
		t.Fatal("a missing")
	}
	c.put("d", 4) // the hand passes a and evicts b
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

// TestCacheSecondChance: when a full shard takes a new entry, the one it
// drops was not used since the hand last passed it, if any such entry
// exists.
func TestCacheSecondChance(t *testing.T) {
	const limit = 8
	var c idCache
	c.init(limit)
	for id := ID(1); id <= limit; id++ {
		c.put(id, fmt.Sprint(id))
	}
	sh := &c.shards[0].mu
	rng := rand.New(rand.NewPCG(3, 4))
	for next := ID(limit + 1); next < 500; next++ {
		for id := range sh.m {
			if rng.IntN(2) == 0 {
				c.get(id)
			}
		}
		cold := map[ID]bool{}
		for id, i := range sh.m {
			if !sh.c.slots[i].ref.Load() {
				cold[id] = true
			}
		}
		before := make(map[ID]bool, limit)
		for id := range sh.m {
			before[id] = true
		}
		c.put(next, fmt.Sprint(next))
		for id := range before {
			if _, ok := sh.m[id]; !ok && len(cold) > 0 && !cold[id] {
				t.Fatalf("put %d evicted %d, used since the last sweep, while %v were not", next, id, cold)
			}
		}
		if len(sh.m) != limit {
			t.Fatalf("%d entries", len(sh.m))
		}
	}
}

// TestCacheModel checks a shard against a map under random operations: a
// hit returns the latest value, the size stays bounded, a fresh put is
// found.
func TestCacheModel(t *testing.T) {
	const limit = 8
	var c idCache
	c.init(limit)
	if len(c.shards) != 1 {
		t.Fatalf("%d shards for %d entries", len(c.shards), limit)
	}
	model := map[ID]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 20000; step++ {
		id := ID(rng.IntN(20))
		switch rng.IntN(3) {
		case 0:
			name, ok := c.get(id)
			if want, in := model[id]; ok && (!in || name != want) {
				t.Fatalf("step %d: get %d = %q, model %q %v", step, id, name, want, in)
			}
		case 1:
			v := fmt.Sprint(id, step)
			c.put(id, v)
			model[id] = v
			if got, ok := c.get(id); !ok || got != v {
				t.Fatalf("step %d: fresh put %d not found", step, id)
			}
		case 2:
			c.remove(id)
			delete(model, id)
		}
		st := c.stats()
		if st.Entries > limit || st.Entries != len(c.shards[0].mu.m) {
			t.Fatalf("step %d: %d entries, map %d", step, st.Entries, len(c.shards[0].mu.m))
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
		total += c.shards[i].mu.c.limit
	}
	if total < 1000 || total > 1000+len(c.shards) {
		t.Errorf("shard limits sum to %d for size 1000", total)
	}
}
