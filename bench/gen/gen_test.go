package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/invariants"
)

func mustNew(t testing.TB, cfg Config) *Gen {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// firstLines returns the telnet encoding of the first n points.
func firstLines(t testing.TB, cfg Config, n int) []byte {
	g := mustNew(t, cfg)
	var p Point
	var b []byte
	for i := 0; i < n && g.Next(&p); i++ {
		b = g.AppendPut(b, &p)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestGolden pins the dataset: a change here changes every quoted figure.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "8afea70dad830dbdece0ac63d18f955b443d423fe90c623d18eaaaa36456be8d"},
		{Config{Values: ValuesFloat}, "cc386fe49109cabdec5c87bf731a5555da5854bdcf2ecf0ce1c6aab58031c177"},
		{Config{Shape: ShapeCounters}, "96edf7b47a2e715428d8c211e07a07d4f7f2aabdd1bdd5d29be1d45f9a6b4bdf"},
		{Config{Shape: ShapeHighCard, Hosts: 5000}, "65c72c0c7c6e073a3826226498735d823fd4f9766afdf747b4e7305027cd084f"},
	} {
		got := sha(firstLines(t, tc.cfg, 20_000))
		if got != tc.want {
			t.Errorf("%s/%s: sha256 of the first 20,000 put lines = %s, want %s",
				tc.cfg.Shape, tc.cfg.Values, got, tc.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	got := string(firstLines(t, Config{}, 1))
	want := "put cpu_usage_user 1767225600 61 hostname=host_0 region=us-east-1 datacenter=us-east-1a " +
		"rack=90 os=Ubuntu16.04LTS arch=x64 team=CHI service=3 service_version=0 service_environment=test\n"
	if got != want {
		t.Fatalf("first line\n got %q\nwant %q", got, want)
	}
}

func TestSameSeedSameBytesOtherSeedOther(t *testing.T) {
	a := firstLines(t, Config{Seed: 7, Hosts: 3}, 5000)
	b := firstLines(t, Config{Seed: 7, Hosts: 3}, 5000)
	c := firstLines(t, Config{Seed: 8, Hosts: 3}, 5000)
	if string(a) != string(b) {
		t.Fatal("same seed gave different bytes")
	}
	if string(a) == string(c) {
		t.Fatal("seeds 7 and 8 gave the same bytes")
	}
}

func TestResetRepeats(t *testing.T) {
	g := mustNew(t, Config{Hosts: 2, Span: time.Hour})
	var p Point
	var a, b []byte
	for g.Next(&p) {
		a = g.AppendPut(a, &p)
	}
	g.Reset()
	for g.Next(&p) {
		b = g.AppendPut(b, &p)
	}
	if string(a) != string(b) {
		t.Fatal("Reset did not repeat the sequence")
	}
}

// TestSeriesIndependentOfHostCount: host 2's data is the same in a 3-host and
// a 50-host dataset, so small benchmark runs see a prefix of the big one.
func TestSeriesIndependentOfHostCount(t *testing.T) {
	collect := func(hosts int) []int64 {
		g := mustNew(t, Config{Hosts: hosts, Span: time.Hour})
		var p Point
		var vs []int64
		for g.Next(&p) {
			if p.Host == 2 && p.Metric == 4 {
				vs = append(vs, p.Int)
			}
		}
		return vs
	}
	a, b := collect(3), collect(50)
	if len(a) != 360 || len(a) != len(b) {
		t.Fatalf("lengths %d %d, want 360", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("point %d: %d vs %d", i, a[i], b[i])
		}
	}
	if g := mustNew(t, Config{Hosts: 50}); g.Hosts()[2] != mustNew(t, Config{Hosts: 3}).Hosts()[2] {
		t.Fatal("host 2 tags depend on the host count")
	}
}

func TestOrderAndCounts(t *testing.T) {
	cfg := Config{Hosts: 3, Span: 5 * time.Minute}
	g := mustNew(t, cfg)
	if g.NumPoints() != 30*3*10 || g.NumSeries() != 30 {
		t.Fatalf("NumPoints %d NumSeries %d", g.NumPoints(), g.NumSeries())
	}
	var p Point
	n := 0
	start := DefaultStart.UnixMilli()
	for g.Next(&p) {
		step, host, metric := n/30, n/10%3, n%10
		if p.T != start+int64(step)*10_000 || p.Host != host || p.Metric != metric {
			t.Fatalf("point %d = t %d host %d metric %d", n, p.T, p.Host, p.Metric)
		}
		n++
	}
	if n != g.NumPoints() {
		t.Fatalf("yielded %d points, want %d", n, g.NumPoints())
	}
}

func TestValueRangesAndText(t *testing.T) {
	for _, vm := range []ValueMode{ValuesInt, ValuesFloat} {
		g := mustNew(t, Config{Hosts: 5, Values: vm})
		var p Point
		lo, hi := math.Inf(1), math.Inf(-1)
		for g.Next(&p) {
			f, err := strconv.ParseFloat(string(p.Text), 64)
			if err != nil || f != p.Float {
				t.Fatalf("%s: text %q parses to %v (%v), Float %v", vm, p.Text, f, err, p.Float)
			}
			if vm == ValuesInt && (p.IsFloat || float64(p.Int) != p.Float) {
				t.Fatalf("int mode point %+v", p)
			}
			if vm == ValuesFloat && (!p.IsFloat || len(p.Text) < 4 || p.Text[len(p.Text)-3] != '.') {
				t.Fatalf("float mode text %q", p.Text)
			}
			lo, hi = min(lo, p.Float), max(hi, p.Float)
		}
		if lo != 0 || hi != 100 {
			t.Errorf("%s: values span %v..%v, want exactly 0..100 (the walk reaches both clamps)", vm, lo, hi)
		}
	}
}

func TestCountersIncreaseAndReset(t *testing.T) {
	g := mustNew(t, Config{Hosts: 10, Shape: ShapeCounters, Values: ValuesFloat})
	last := make([]int64, g.NumSeries())
	var p Point
	resets, n := 0, 0
	for g.Next(&p) {
		if p.IsFloat {
			t.Fatal("counters must be integers in every value mode")
		}
		i := p.Host*10 + p.Metric
		if n >= g.NumSeries() && p.Int < last[i] {
			resets++
		}
		last[i] = p.Int
		n++
	}
	// 100 series x 8639 steps / 4320 is about 200 resets.
	if resets < 150 || resets > 250 {
		t.Fatalf("%d counter resets over a day of 100 series, want about 200", resets)
	}
}

// steps returns the unclamped value steps of a dataset, in units of the
// value (hundredths in float mode).
func steps(t *testing.T, cfg Config) []int64 {
	g := mustNew(t, cfg)
	hi := int64(100)
	scale := 1.0
	if cfg.Values == ValuesFloat {
		hi, scale = 10_000, 100
	}
	last := make([]int64, g.NumSeries())
	var out []int64
	var p Point
	for i := 0; g.Next(&p); i++ {
		v := int64(math.Round(p.Float * scale))
		s := p.Host*len(g.Metrics()) + p.Metric
		if i >= g.NumSeries() && v > 0 && v < hi && last[s] > 0 && last[s] < hi {
			out = append(out, v-last[s])
		}
		last[s] = v
	}
	return out
}

func TestFloatStepDistribution(t *testing.T) {
	d := steps(t, Config{Hosts: 20, Values: ValuesFloat, Span: 6 * time.Hour})
	var sum, sq float64
	for _, s := range d {
		f := float64(s) / 100
		sum += f
		sq += f * f
	}
	n := float64(len(d))
	mean, sd := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
	if math.Abs(mean) > 0.02 || math.Abs(sd-1) > 0.02 {
		t.Fatalf("float steps: mean %.4f sd %.4f over %d, want N(0,1)", mean, sd, len(d))
	}
}

// TestIntStepEntropy checks the figure the dense codec is held to: the
// entropy of round(N(0,1)) is 2.10 bits, 0.26 bytes per point.
func TestIntStepEntropy(t *testing.T) {
	d := steps(t, Config{Hosts: 20, Span: 6 * time.Hour})
	counts := map[int64]int{}
	for _, s := range d {
		counts[s]++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(len(d))
		h -= p * math.Log2(p)
	}
	if math.Abs(h-2.10) > 0.03 {
		t.Fatalf("int step entropy %.3f bits over %d steps, want 2.10", h, len(d))
	}
	if p0 := float64(counts[0]) / float64(len(d)); math.Abs(p0-0.383) > 0.01 {
		t.Fatalf("P(step=0) = %.3f, want 0.383", p0)
	}
}

func TestHighCardShape(t *testing.T) {
	g := mustNew(t, Config{Shape: ShapeHighCard, Hosts: 1000, Span: time.Minute})
	if len(g.Metrics()) != 1 || g.Metrics()[0].Name != "cpu_usage_user" || g.NumPoints() != 6000 {
		t.Fatalf("metrics %v points %d", g.Metrics(), g.NumPoints())
	}
}

func TestValidate(t *testing.T) {
	for _, cfg := range []Config{
		{Hosts: MaxHosts + 1},
		{Hosts: -1},
		{Interval: time.Microsecond},
		{Span: time.Second},
		{Start: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Values: 9},
		{Shape: 9},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestParseNames(t *testing.T) {
	for _, s := range []string{"int", "float"} {
		if m, err := ParseValueMode(s); err != nil || m.String() != s {
			t.Errorf("ParseValueMode(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"devops", "highcard", "counters"} {
		if m, err := ParseShape(s); err != nil || m.String() != s {
			t.Errorf("ParseShape(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"telnet", "json", "influx", "remotewrite"} {
		if f, err := ParseFormat(s); err != nil || f.String() != s {
			t.Errorf("ParseFormat(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("ParseFormat(csv) succeeded")
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are unreliable under the race detector")
	}
	for _, vm := range []ValueMode{ValuesInt, ValuesFloat} {
		g := mustNew(t, Config{Values: vm})
		var p Point
		var buf []byte
		g.Next(&p)
		buf = g.AppendPut(buf, &p)
		allocs := testing.AllocsPerRun(1000, func() {
			if !g.Next(&p) {
				g.Reset()
			}
			buf = g.AppendPut(buf[:0], &p)
			buf = g.AppendJSON(buf[:0], &p)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per point, want 0", vm, allocs)
		}
	}
}

func raceOn() bool { return invariants.RaceEnabled }

// TestShard: n shards yield every point of the dataset once, each host in
// one shard, each series' points in order.
func TestShard(t *testing.T) {
	whole, err := New(Config{Hosts: 5, Span: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[3]int64]int64{} // host, metric, T -> value
	var p Point
	for whole.Next(&p) {
		want[[3]int64{int64(p.Host), int64(p.Metric), p.T}] = p.Int
	}
	got := 0
	for i := range 3 {
		g, _ := New(Config{Hosts: 5, Span: 10 * time.Minute})
		g.Shard(i, 3)
		last := map[[2]int]int64{}
		for g.Next(&p) {
			got++
			k := [3]int64{int64(p.Host), int64(p.Metric), p.T}
			if v, ok := want[k]; !ok || v != p.Int || p.Host%3 != i {
				t.Fatalf("shard %d: point %v = %d, want %d (present %v)", i, k, p.Int, v, ok)
			}
			if sk := [2]int{p.Host, p.Metric}; last[sk] >= p.T {
				t.Fatalf("shard %d: series %v out of order at %d", i, sk, p.T)
			} else {
				last[sk] = p.T
			}
		}
	}
	if got != len(want) {
		t.Errorf("shards yielded %d points, want %d", got, len(want))
	}
}
