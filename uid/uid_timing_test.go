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
