package uid

import (
	"fmt"
	"testing"
)

var sinkID ID
var sinkName string

func warmUIDs(b *testing.B, n int) (*UIDs, [][]byte) {
	u := openUIDs(b, openDB(b), Options{})
	names := make([][]byte, n)
	for i := range names {
		names[i] = fmt.Appendf(nil, "sys.cpu.user.%d", i)
		mustResolve(b, u, Metric, string(names[i]))
	}
	return u, names
}

// BenchmarkLookupWarm: name → UID from the cache.
func BenchmarkLookupWarm(b *testing.B) {
	u, names := warmUIDs(b, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sinkID, _ = u.Lookup(ctx, Metric, names[i&1023])
	}
}

// BenchmarkLookupWarmParallel: the same from every CPU at once.
func BenchmarkLookupWarmParallel(b *testing.B) {
	u, names := warmUIDs(b, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var id ID
		for i := 0; pb.Next(); i++ {
			id, _ = u.Lookup(ctx, Metric, names[i&1023])
		}
		sinkID = id
	})
}

// BenchmarkNameWarm: UID → name from the cache.
func BenchmarkNameWarm(b *testing.B) {
	u, _ := warmUIDs(b, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sinkName, _ = u.Name(ctx, Metric, ID(i&1023+1))
	}
}

// BenchmarkResolvePointWarm: a point with 4 tags, all names cached.
func BenchmarkResolvePointWarm(b *testing.B) {
	u := openUIDs(b, openDB(b), Options{})
	tags := []Tag{{[]byte("host"), []byte("web01")}, {[]byte("dc"), []byte("lga")},
		{[]byte("cpu"), []byte("3")}, {[]byte("rack"), []byte("r12")}}
	metric := []byte("sys.cpu.user")
	buf, err := u.ResolvePoint(ctx, nil, metric, tags)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf, _ = u.ResolvePoint(ctx, buf[:0], metric, tags)
	}
}

// BenchmarkAssignNew: new names on the real engine (a temporary directory,
// synced writes), one by one through Resolve as OpenTSDB's protocol does,
// and 1,000 at a time through ResolveBatch. ns/name is the figure to
// compare.
func BenchmarkAssignNew(b *testing.B) {
	for _, batch := range []int{1, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			u := openUIDs(b, openDB(b), Options{})
			names := make([][]byte, batch)
			ids := make([]ID, batch)
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				for i := range names {
					names[i] = fmt.Appendf(names[i][:0], "host.%09d", n)
					n++
				}
				var err error
				if batch == 1 {
					ids[0], err = u.Resolve(ctx, TagV, names[0])
				} else {
					err = u.ResolveBatch(ctx, TagV, names, ids)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/name")
		})
	}
}
