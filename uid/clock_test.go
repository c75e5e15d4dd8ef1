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

// TestCacheModel checks a shard of each cache, name→ID and ID→name,
// against a map under random operations: a hit returns the latest value,
// the size stays bounded, a fresh put is found.
func TestCacheModel(t *testing.T) {
	const limit = 8
	var ids idCache
	ids.init(limit)
	checkCacheModel(t, &ids.cache, ids.get, ids.put, ids.remove, func(i int) ID { return ID(i) },
		func(i, step int) string { return fmt.Sprint(i, step) })
	var names nameCache
	names.init(limit)
	checkCacheModel(t, &names.cache, func(n string) (ID, bool) { return names.get([]byte(n)) }, names.put, names.remove,
		func(i int) string { return fmt.Sprint("n", i) }, func(i, step int) ID { return ID(i*100000 + step) })
}

func checkCacheModel[K, V comparable](t *testing.T, c *cache[K, V], get func(K) (V, bool), put func(K, V), remove func(K),
	key func(int) K, val func(int, int) V) {
	t.Helper()
	if len(c.shards) != 1 {
		t.Fatalf("%d shards for %d entries", len(c.shards), c.shards[0].mu.c.limit)
	}
	limit := c.shards[0].mu.c.limit
	model := map[K]V{}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 20000; step++ {
		i := rng.IntN(20)
		k := key(i)
		switch rng.IntN(3) {
		case 0:
			v, ok := get(k)
			if want, in := model[k]; ok && (!in || v != want) {
				t.Fatalf("step %d: get %v = %v, model %v %v", step, k, v, want, in)
			}
		case 1:
			v := val(i, step)
			put(k, v)
			model[k] = v
			if got, ok := get(k); !ok || got != v {
				t.Fatalf("step %d: fresh put %v not found", step, k)
			}
		case 2:
			remove(k)
			delete(model, k)
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
