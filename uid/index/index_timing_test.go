package index

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/uid"
)

// bigFixture is a store holding 100,000 series of one metric: 1,000 hosts
// × 100 cpus. Built once per process: building it costs seconds.
type bigFixture struct {
	s      *store
	ix     *Index
	keys   [][]byte
	metric uid.ID
	host   uid.ID
	cpu    uid.ID
}

var (
	bigOnce sync.Once
	big     *bigFixture
)

const bigHosts, bigCPUs = 1000, 100

func getBig(b *testing.B) *bigFixture {
	bigOnce.Do(func() { big = buildBig(b) })
	if big == nil {
		b.Fatal("fixture failed")
	}
	return big
}

// buildBig uses a store that outlives the benchmark that builds it: the
// fixture is shared by every benchmark of the run.
func buildBig(b *testing.B) *bigFixture {
	f := &bigFixture{s: openMemStore(&testing.T{})}
	ctx := context.Background()
	f.metric = f.s.assign(b, uid.Metric, "bench.m")
	f.host, f.cpu = f.s.assign(b, uid.TagK, "host"), f.s.assign(b, uid.TagK, "cpu")
	if f.host > f.cpu {
		b.Fatal("tag key order assumed host < cpu")
	}
	hosts := make([]uid.ID, bigHosts)
	for i := range hosts {
		hosts[i] = f.s.assign(b, uid.TagV, fmt.Sprintf("host-%d", i))
	}
	cpus := make([]uid.ID, bigCPUs)
	for i := range cpus {
		cpus[i] = f.s.assign(b, uid.TagV, fmt.Sprintf("cpu%d", i))
	}
	ix, err := Open(ctx, f.s.meta, f.s.uids, manual())
	if err != nil {
		b.Fatal(err)
	}
	regs := make([]Registration, 0, bigHosts*bigCPUs)
	for _, h := range hosts {
		for _, c := range cpus {
			k := f.s.uids.AppendID(nil, uid.Metric, f.metric)
			k = f.s.uids.AppendID(f.s.uids.AppendID(k, uid.TagK, f.host), uid.TagV, h)
			k = f.s.uids.AppendID(f.s.uids.AppendID(k, uid.TagK, f.cpu), uid.TagV, c)
			f.keys = append(f.keys, k)
			regs = append(regs, Registration{TSUID: k, FirstMs: 0, LastMs: 24 * hourMs})
		}
	}
	if err := ix.RegisterMany(ctx, regs); err != nil {
		b.Fatal(err)
	}
	f.ix = ix
	return f
}

// BenchmarkRegisterExisting is the write path's call for a series the
// index already holds, from every core.
func BenchmarkRegisterExisting(b *testing.B) {
	s := openMemStore(b)
	ix := s.open(b, nil)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = s.tsuid(b, "m", fmt.Sprintf("host=h%d", i), "dc=x")
		mustRegister(b, ix, keys[i], 0, 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := ix.RegisterSeries(keys[i&1023]); err != nil {
				b.Error(err)
			}
			i++
		}
	})
}

// BenchmarkTouchCovered is the per-row span check of a known series.
func BenchmarkTouchCovered(b *testing.B) {
	s := openMemStore(b)
	ix := s.open(b, nil)
	k := s.tsuid(b, "m", "host=a")
	mustRegister(b, ix, k, 0, 48*hourMs)
	b.ReportAllocs()
	for b.Loop() {
		ix.Touch(k, 20*hourMs)
	}
}

// BenchmarkPostingsSelective selects 10 of the 100,000 series of a
// metric: the selection evaluated (eval) and, as a dashboard's refresh
// asks again, answered from the selection cache (cached).
func BenchmarkPostingsSelective(b *testing.B) {
	f := getBig(b)
	ctx := context.Background()
	cpus := make([]string, 10)
	for i := range cpus {
		cpus[i] = fmt.Sprintf("cpu%d", i)
	}
	for _, tc := range []struct {
		name string
		fs   []Filter
	}{
		{"literal_or", []Filter{{TagK: f.host, Type: LiteralOr, Values: []string{"host-7"}}, {TagK: f.cpu, Type: LiteralOr, Values: cpus}}},
		{"wildcard", []Filter{{TagK: f.host, Type: Wildcard, Pattern: "*-7"}, {TagK: f.cpu, Type: LiteralOr, Values: cpus}}},
		{"regexp", []Filter{{TagK: f.host, Type: Regexp, Pattern: "^host-7$"}, {TagK: f.cpu, Type: RegexMatch, Pattern: "cpu[0-9]"}}},
		// A Grafana multi-value variable: names, as an expression.
		{"regex_set", []Filter{{TagK: f.host, Type: RegexMatch, Pattern: "(host-7|host-none)"}, {TagK: f.cpu, Type: RegexMatch, Pattern: "cpu[0-9]"}}},
	} {
		for _, way := range []struct {
			name     string
			postings func(context.Context, uid.ID, []Filter) (*roaring.Bitmap, error)
		}{{"eval", f.ix.postings}, {"cached", f.ix.Postings}} {
			b.Run(tc.name+"/"+way.name, func(b *testing.B) {
				var bm *roaring.Bitmap
				b.ReportAllocs()
				cpu := cputime.Process()
				defer func() { reportCPU(b, cputime.Process()-cpu) }()
				for b.Loop() {
					var err error
					if bm, err = way.postings(ctx, f.metric, tc.fs); err != nil {
						b.Fatal(err)
					}
				}
				if bm.GetCardinality() != 10 {
					b.Fatalf("selected %d series, want 10", bm.GetCardinality())
				}
			})
		}
	}
}

// BenchmarkLoad100k opens an Index on a store of 100,000 series: the start
// of a daemon, which reads only the index rows.
func BenchmarkLoad100k(b *testing.B) {
	f := getBig(b)
	b.ReportAllocs()
	cpu := cputime.Process()
	defer func() { reportCPU(b, cputime.Process()-cpu) }()
	for b.Loop() {
		ix, err := Open(context.Background(), f.s.meta, f.s.uids, manual())
		if err != nil {
			b.Fatal(err)
		}
		if ix.Len() != bigHosts*bigCPUs {
			b.Fatalf("loaded %d series", ix.Len())
		}
		ix.halt()
	}
}

// reportCPU reports the process CPU time per operation, steadier than wall
// time on a shared machine (it includes background goroutines).
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// rawTSUID is metric 1 with tag 1 = i, 3-byte UIDs: registration needs no
// names.
func rawTSUID(i int) []byte {
	return []byte{0, 0, 1, 0, 0, 1, byte(i >> 16), byte(i >> 8), byte(i)}
}

// BenchmarkRegisterNew registers new series one by one on the embedded
// engine on disk (every write synced), from one goroutine and from many.
func BenchmarkRegisterNew(b *testing.B) {
	for _, par := range []bool{false, true} {
		b.Run(fmt.Sprintf("parallel=%v", par), func(b *testing.B) {
			s := openStore(b)
			ix := s.open(b, nil)
			var next atomic.Int64
			b.ReportAllocs()
			cpu := cputime.Process()
			defer func() { reportCPU(b, cputime.Process()-cpu) }()
			if !par {
				for b.Loop() {
					if err := ix.RegisterSeries(rawTSUID(int(next.Add(1)))); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := ix.RegisterSeries(rawTSUID(int(next.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
