package read

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/series"
)

// TestRowExtremes: a cached Int row's block extremes give, for any span
// of any suffix, the smallest and largest value the points hold; a row
// with a float point, or too short to be worth them, has none.
func TestRowExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		pts := make([]series.Point, rng.IntN(300))
		for i := range pts {
			pts[i] = series.IntPoint(int64(i)*1000, rng.Int64N(2001)-1000)
		}
		_, blk := rowSummaries(pts)
		e := &cacheEntry{pts: pts, blk: blk}
		if (e.blk == nil) != (len(pts) < 2*blockPoints) {
			t.Fatalf("%d points: block summaries %v", len(pts), e.blk != nil)
		}
		if len(pts) == 0 {
			continue
		}
		n := 1 + rng.IntN(len(pts))
		suffix := pts[len(pts)-n:]
		k := 1 + rng.IntN(n)
		lo, hi, ok := e.extremes(suffix, k)
		if ok != (e.blk != nil) {
			t.Fatalf("ok %v with block summaries %v", ok, e.blk != nil)
		}
		if !ok {
			continue
		}
		wlo, whi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, p := range suffix[:k] {
			wlo, whi = min(wlo, p.Int()), max(whi, p.Int())
		}
		if lo != wlo || hi != whi {
			t.Fatalf("span [%d, %d) of %d: got %d..%d, want %d..%d", len(pts)-n, len(pts)-n+k, len(pts), lo, hi, wlo, whi)
		}
		if _, _, ok := e.extremes(append([]series.Point(nil), suffix...), k); ok {
			t.Fatal("a copy of the suffix was taken for the row's own points")
		}
	}
	pts := make([]series.Point, 100)
	for i := range pts {
		pts[i] = series.IntPoint(int64(i), 1)
	}
	pts[77] = series.Float64Point(77, 0.5)
	if _, blk := rowSummaries(pts); blk != nil {
		t.Fatal("a row with a float point has block summaries")
	}
}

// TestTouchKeepsTrustedRowsHot: a row the trust index answers is marked
// used (touch) and goes back to the front of the LRU list when its turn
// to be evicted comes, so rows added after it evict colder ones first; an
// evicted entry touched later stays out.
func TestTouchKeepsTrustedRowsHot(t *testing.T) {
	pts := make([]series.Point, 100)
	for i := range pts {
		pts[i] = series.IntPoint(int64(i), int64(i))
	}
	size := entrySize(len(pts), 1)
	c := newRowCache(3*size*cacheShards, -1)                    // three entries a shard
	fp := func(i int) uint64 { return uint64(i) * cacheShards } // all in shard 0
	var es []*cacheEntry
	for i := range 3 {
		es = append(es, c.adopt(fp(i), []byte{byte(i)}, 1, pts))
	}
	c.touch(es[0]) // the oldest, answered by trust: now the newest
	c.adopt(fp(3), []byte{3}, 1, pts)
	if es[0].gone.Load() || !es[1].gone.Load() {
		t.Fatalf("after a touch of the oldest, eviction took it (%v) and spared the next (%v)", es[0].gone.Load(), !es[1].gone.Load())
	}
	c.touch(es[1]) // evicted: must not be linked back
	if _, n := c.size(); n != 3 {
		t.Fatalf("%d entries after touching an evicted one, want 3", n)
	}
	for range 3 {
		c.adopt(fp(10+len(es)), []byte{byte(10 + len(es))}, 1, pts)
		es = append(es, nil)
	}
	if _, n := c.size(); n != 3 || !es[0].gone.Load() {
		t.Fatalf("%d entries, want 3, and the touched one evicted in its turn (%v)", n, es[0].gone.Load())
	}
}

// TestTrustIndexBounded: the trust index points to at most a cache
// shard's worth of entries per shard, whatever the cache has evicted
// since (an evicted entry stays reachable until its record goes), and at
// most trustPerShard rows; an hour larger than a shard is not recorded.
func TestTrustIndexBounded(t *testing.T) {
	pts := make([]series.Point, 100)
	one := entrySize(len(pts), 8)
	maxBytes := 10 * one
	ti := newTrustIndex(new(changes.Tracker), maxBytes)
	entry := func(i int) *cacheEntry {
		return &cacheEntry{key: binary.BigEndian.AppendUint64(nil, uint64(i)), pts: pts}
	}
	check := func(what string) {
		t.Helper()
		for i := range ti.shards {
			s := &ti.shards[i]
			var rows int
			var bytes int64
			for _, tr := range s.m {
				rows, bytes = rows+1, bytes+tr.e.size()
			}
			for _, th := range s.hours {
				rows, bytes = rows+1+len(th.entries), bytes+entriesSize(th.entries)
			}
			if rows != s.used.rows || bytes != s.used.bytes || bytes > maxBytes || rows > trustPerShard {
				t.Fatalf("%s: shard %d holds %d rows and %d bytes, counted %d and %d, bound %d",
					what, i, rows, bytes, s.used.rows, s.used.bytes, maxBytes)
			}
		}
	}
	for i := range 1000 {
		ti.record(entry(i).key, entry(i), 0)
		ti.record(entry(i).key, entry(i), 0) // a row read again replaces its record
	}
	check("rows")
	for h := range 1000 {
		es := []*cacheEntry{entry(2 * h), entry(2*h + 1)}
		ti.recordHour(h%20, "m", int64(h)*3600, 0, es)
		ti.recordHour(h%20, "m", int64(h)*3600, 0, es)
	}
	check("hours")
	big := make([]*cacheEntry, 11)
	for i := range big {
		big[i] = entry(i)
	}
	ti.recordHour(0, "big", 0, 0, big)
	if ti.findHour(0, "big", 0) != nil {
		t.Fatal("an hour larger than a shard's bound was recorded")
	}
	if ti.findHour(999%20, "m", 999*3600) == nil {
		t.Fatal("the last hour recorded is not found")
	}
	check("after a refused hour")
}

// TestRowCacheAdmission: a stored row (eager) enters on its first offer
// while its shard has room for it without evicting; once the shard is
// full it enters on its second, as a head row still filling always does.
func TestRowCacheAdmission(t *testing.T) {
	const rowPts = 360
	shardBytes := 4 * entrySize(rowPts, 8)
	c := newRowCache(shardBytes*cacheShards, -1)
	pts := make([]series.Point, rowPts)
	key := func(fp uint64) []byte { return binary.BigEndian.AppendUint64(nil, fp) }
	// Fingerprints of one shard: fp % cacheShards == 0.
	for i := range uint64(4) {
		fp := i * cacheShards
		if e := c.add(fp, key(fp), 1, pts, true); e == nil {
			t.Fatalf("stored row %d of 4 not kept on its first offer while its shard had room", i)
		}
	}
	full := uint64(4 * cacheShards)
	if e := c.add(full, key(full), 1, pts, true); e != nil {
		t.Fatal("a stored row entered a full shard on its first offer")
	}
	if e := c.add(full, key(full), 1, pts, true); e == nil {
		t.Fatal("a stored row was not kept on its second offer to a full shard")
	}
	if _, n := c.size(); n != 4 {
		t.Fatalf("%d entries after the full shard evicted one for one, want 4", n)
	}
	filling := uint64(1) // another, empty shard
	if e := c.add(filling, key(filling), -1, pts, false); e != nil {
		t.Fatal("a head row still filling was kept on its first offer")
	}
	if e := c.add(filling, key(filling), -1, pts, false); e == nil {
		t.Fatal("a head row still filling was not kept on its second offer")
	}
}
