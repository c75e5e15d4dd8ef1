package gen

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tsd-db/tsd/series"
)

// Metric names one generated metric.
type Metric struct {
	// Name is the tsd/OpenTSDB/Prometheus metric name, e.g. cpu_usage_user.
	Name string
	// Field is the Influx field, e.g. usage_user.
	Field string
}

var (
	cpuFields = []string{
		"usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait",
		"usage_irq", "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice",
	}
	netFields = []string{
		"bytes_recv", "bytes_sent", "packets_recv", "packets_sent", "err_in",
		"err_out", "drop_in", "drop_out", "icmp_in", "icmp_out",
	}
)

// Point is one generated point. Next overwrites every field; Text keeps its
// capacity between calls.
type Point struct {
	// Metric indexes Gen.Metrics.
	Metric int
	// Host indexes Gen.Hosts.
	Host int
	// T is milliseconds since the Unix epoch.
	T int64
	// Int is the value in int mode and for counters; 0 in float mode.
	Int int64
	// Float is the value as float64 in every mode.
	Float float64
	// IsFloat reports float mode (Text has two decimals).
	IsFloat bool
	// Text is the value as written on the wire ("42", "42.07").
	Text []byte
}

// Series returns the point as the shared point type (Int or Float64 kind).
func (p *Point) Series() series.Point {
	if p.IsFloat {
		return series.Float64Point(p.T, p.Float)
	}
	return series.IntPoint(p.T, p.Int)
}

// state is one series' random stream and walk position.
type state struct {
	rng  rand.PCG
	v    int64 // value, in hundredths in float mode
	rate int64 // counters only
}

// Gen iterates over a dataset. It is not safe for concurrent use; its
// Metrics and Hosts are read-only and may be shared.
type Gen struct {
	cfg     Config
	metrics []Metric
	measure string
	hosts   []Host
	series  []state
	steps   int
	// cursor
	step, host, metric int
	// first and stride select the shard's hosts: first, first+stride, ...
	first, stride int
}

// New returns a generator positioned before the first point.
func New(cfg Config) (*Gen, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Gen{cfg: cfg, steps: cfg.Steps()}
	g.metrics, g.measure = metricsOf(cfg.Shape)
	g.hosts = make([]Host, cfg.Hosts)
	for i := range g.hosts {
		g.hosts[i] = newHost(cfg.Seed, i)
	}
	g.series = make([]state, cfg.Hosts*len(g.metrics))
	g.stride = 1
	g.Reset()
	return g, nil
}

func metricsOf(s Shape) ([]Metric, string) {
	measure, fields := "cpu", cpuFields
	switch s {
	case ShapeHighCard:
		fields = cpuFields[:1]
	case ShapeCounters:
		measure, fields = "net", netFields
	}
	ms := make([]Metric, len(fields))
	for i, f := range fields {
		ms[i] = Metric{Name: measure + "_" + f, Field: f}
	}
	return ms, measure
}

// Config returns the configuration with defaults applied.
func (g *Gen) Config() Config { return g.cfg }

// Metrics returns the metric set; do not modify it.
func (g *Gen) Metrics() []Metric { return g.metrics }

// Measurement returns the Influx measurement ("cpu" or "net").
func (g *Gen) Measurement() string { return g.measure }

// Hosts returns the hosts; do not modify them.
func (g *Gen) Hosts() []Host { return g.hosts }

// NumSeries returns hosts x metrics.
func (g *Gen) NumSeries() int { return len(g.series) }

// NumPoints returns the total number of points Next yields.
func (g *Gen) NumPoints() int { return g.steps * len(g.series) }

// Reset rewinds to the first point; the sequence repeats exactly.
func (g *Gen) Reset() {
	g.step, g.host, g.metric = 0, g.first, 0
	for h := 0; h < g.cfg.Hosts; h++ {
		for m := range g.metrics {
			g.initSeries(&g.series[h*len(g.metrics)+m], h, m)
		}
	}
}

func (g *Gen) initSeries(s *state, h, m int) {
	s.rng.Seed(g.cfg.Seed, uint64(h)<<8|uint64(m))
	switch {
	case g.cfg.Shape == ShapeCounters:
		s.v = int64(s.rng.Uint64() % 1_000_000)
		s.rate = 100 + int64(s.rng.Uint64()%9_901)
	case g.cfg.Values == ValuesFloat:
		s.v = int64(s.rng.Uint64() % 10_001)
	default:
		s.v = int64(s.rng.Uint64() % 101)
	}
}

// Shard restricts g to hosts i, i+n, i+2n, ... (0 <= i < n) and rewinds
// it: n shards together yield every point of the dataset once, each
// series' points all in one shard and in the same order, as collectors
// that each own some hosts send them.
func (g *Gen) Shard(i, n int) {
	g.first, g.stride = i, n
	g.Reset()
}

// Next fills p with the next point and reports whether there was one.
func (g *Gen) Next(p *Point) bool {
	if g.step >= g.steps || g.first >= g.cfg.Hosts {
		return false
	}
	s := &g.series[g.host*len(g.metrics)+g.metric]
	if g.step > 0 {
		g.advance(s)
	}
	g.fill(p, s)
	g.metric++
	if g.metric == len(g.metrics) {
		g.metric = 0
		g.host += g.stride
		if g.host >= g.cfg.Hosts {
			g.host = g.first
			g.step++
		}
	}
	return true
}

func (g *Gen) advance(s *state) {
	switch {
	case g.cfg.Shape == ShapeCounters:
		advanceCounter(s)
	case g.cfg.Values == ValuesFloat:
		s.v = clamp(s.v+round(100*normal(&s.rng)), 10_000)
	default:
		s.v = clamp(s.v+round(normal(&s.rng)), 100)
	}
}

// resetOdds is the 1-in-N chance per step that a counter restarts.
const resetOdds = 4320

func advanceCounter(s *state) {
	inc := max(0, s.rate+round(normal(&s.rng)*float64(s.rate)/4))
	if s.rng.Uint64()%resetOdds == 0 {
		s.v = 0
	}
	s.v += inc
}

func (g *Gen) fill(p *Point, s *state) {
	p.Metric, p.Host = g.metric, g.host
	p.T = g.cfg.Start.UnixMilli() + int64(g.step)*g.cfg.Interval.Milliseconds()
	p.IsFloat = g.cfg.Values == ValuesFloat && g.cfg.Shape != ShapeCounters
	if p.IsFloat {
		p.Int = 0
		p.Float = float64(s.v) / 100
		p.Text = appendHundredths(p.Text[:0], s.v)
		return
	}
	p.Int, p.Float = s.v, float64(s.v)
	p.Text = strconv.AppendInt(p.Text[:0], s.v, 10)
}

// appendHundredths writes a non-negative count of hundredths as "I.FF".
func appendHundredths(dst []byte, v int64) []byte {
	dst = strconv.AppendInt(dst, v/100, 10)
	f := v % 100
	return append(dst, '.', byte('0'+f/10), byte('0'+f%10))
}

// normal returns a standard normal draw (Box-Muller, cosine branch).
func normal(r *rand.PCG) float64 {
	u1 := float64(r.Uint64()>>11+1) / (1 << 53) // (0, 1]
	u2 := float64(r.Uint64()>>11) / (1 << 53)   // [0, 1)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func round(x float64) int64 { return int64(math.RoundToEven(x)) }

func clamp(v, hi int64) int64 { return min(max(v, 0), hi) }
