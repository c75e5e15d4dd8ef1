package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/load"
	"github.com/tsd-db/tsd/bench/procstat"
	"github.com/tsd-db/tsd/bench/queryset"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type flags struct {
	cfg     gen.Config
	shape   string
	values  string
	conns   int
	protos  string
	queries int
	// turnRuns is the runs of one turn of pairedMeans.
	turnRuns int
	tsd, vm  string
	keep     bool
	rollups  bool
	// tunedConns is the connections of the tuned-loader Influx run
	// (bodies encoded before the clock starts); 0 skips it.
	tunedConns int
	// pairs is how many times each protocol loads tsd then
	// VictoriaMetrics, in turn (at least 1).
	pairs int
	// vary adds the means of varied runs (queryset.Query.Varied).
	vary bool
	// tsbs adds the means of TSBS's query types (queryset.TSBS), varied,
	// tsbsN runs of each on each side (0: as many as queries).
	tsbs  bool
	tsbsN int
	// grafana adds the means of the set's queries sent as Grafana sends
	// them (queryset.Grafana).
	grafana bool
	// asGrafana makes pairedMeans send as Grafana does; set on a copy of
	// the flags by grafanaMeans.
	asGrafana bool
	// turns logs every turn of pairedMeans.
	turns bool
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("tsdvm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.cfg.Hosts, "hosts", 100, "dataset hosts")
	fs.DurationVar(&f.cfg.Span, "span", 24*time.Hour, "dataset span (10 s interval)")
	fs.StringVar(&f.shape, "shape", "devops", "dataset shape: devops (10 metrics a host; four queries of the set) or highcard (one metric a host; highcard-10, with -hosts 100000 -span 1h as the query set means it)")
	fs.StringVar(&f.values, "values", "int", "value mode: int or float")
	fs.IntVar(&f.conns, "conns", 2, "loader connections, one sender each")
	fs.StringVar(&f.protos, "protos", "influx,telnet,remotewrite", "protocols to load, in order; sizes and queries follow the influx load")
	fs.IntVar(&f.queries, "n", 80, "runs of each query on each side (0: no queries)")
	fs.IntVar(&f.turnRuns, "turn-runs", 10, "runs of a query a side makes in one turn of the means (the last turns take the remainder)")
	fs.StringVar(&f.tsd, "tsd", "", "tsd binary (default: go build ./cmd/tsd)")
	fs.StringVar(&f.vm, "vm", "", "victoria-metrics binary (default: built from the module proxy, cached)")
	fs.BoolVar(&f.keep, "keep", false, "keep the data directories")
	fs.IntVar(&f.tunedConns, "tuned-conns", 4, "connections of the Influx run with the loader tuned (every body encoded before the clock starts), after the others; 0 skips it")
	fs.BoolVar(&f.rollups, "rollups", true, "run tsd with rollups (tsd.rollups.enable); -rollups=false measures the store without its rollup tables")
	fs.BoolVar(&f.turns, "turns", false, "log each daemon's turns of every query mean (mean, median and slowest of the turn, and the CPU each daemon used during it) to stderr")
	fs.BoolVar(&f.tsbs, "tsbs", true, "also time TSBS's devops query types as its VictoriaMetrics generator writes them (one expression over the metrics, grouped by __name__), each run drawn as -vary draws them")
	fs.IntVar(&f.tsbsN, "tsbs-n", 0, "runs of each TSBS query type on each side (default -n); with -turn-runs as large, one turn of back-to-back queries a side, as TSBS's runner sends them")
	fs.BoolVar(&f.grafana, "grafana", true, "also time the set's queries as Grafana's Prometheus data source sends them: Go's net/http client asking for gzip, each query a POST of a form")
	fs.BoolVar(&f.vary, "vary", true, "also time each query with every run naming other hosts and ending at another second, drawn the same for both daemons, as TSBS's queries are: no answer cache serves them")
	fs.IntVar(&f.pairs, "pairs", 3, "loads of each protocol, tsd then VictoriaMetrics in turn; the CPU, memory and rate rows add the median of the pairs' ratios (sizes and queries follow the first)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.pairs < 1 {
		return nil, fmt.Errorf("-pairs %d: at least 1", f.pairs)
	}
	if f.turnRuns < 1 {
		return nil, fmt.Errorf("-turn-runs %d: at least 1", f.turnRuns)
	}
	var err error
	if f.cfg.Values, err = gen.ParseValueMode(f.values); err != nil {
		return f, err
	}
	f.cfg.Shape, err = gen.ParseShape(f.shape)
	return f, err
}

// side is what one daemon did under one protocol.
type side struct {
	res        *load.Result
	loaderCPU  float64 // seconds, over the timed load (load.Result.LoaderCPUSeconds)
	bytes      int64   // settled size, allocated blocks; 0 when not measured
	stopped    int64   // size right after a clean stop
	running    int64   // tsd: size after /api/compact, still running
	settleCPU  float64 // daemon CPU seconds from the load's start to settled
	points     int64
	queryMeans map[string]time.Duration // settled: rows in the store (VictoriaMetrics: merged parts)
	headMeans  map[string]time.Duration // before settling: rows in the head (VictoriaMetrics: in-memory parts)
	// headVaried and queryVaried are headMeans and queryMeans of varied
	// runs (-vary), headTSBS and queryTSBS of TSBS's queries (-tsbs).
	headVaried, queryVaried map[string]time.Duration
	headTSBS, queryTSBS     map[string]time.Duration
	// headGrafana and queryGrafana are headMeans and queryMeans of the
	// set's queries sent as Grafana sends them (-grafana).
	headGrafana, queryGrafana map[string]time.Duration
	first                     queryset.Stats // the first queries after the load, rows still in the head
	// floorHead and floorStore are the floor's turns on floorQuery
	// (floor.go) beside headMeans' and queryMeans'; tsd's side.
	floorHead, floorStore floorRun
}

// floorRun is what the turns on floorQuery showed: the floor's mean, and
// how many turns of each side (tsd, VictoriaMetrics, the floor) ran at
// loopback speed, their median under hotTurn.
type floorRun struct {
	mean  time.Duration
	hot   [3]int
	turns int
}

// hotTurn splits the turns of an answer-cache hit in two. On this 2-core
// VM a turn either stays on one CPU, both processes taking turns there,
// about 15 µs a round trip, or has each wake the other on the other CPU
// from its idle state, 100-200 µs (the wake-up, not the work: the floor
// shows both). Which one a turn gets is the scheduler's draw at its
// start, and it decides single-1h's mean more than either server does.
const hotTurn = 60 * time.Microsecond

// row is one protocol's run: tsd, VictoriaMetrics, and for telnet tsd with
// the version barrier; more holds the later load-only pairs (-pairs).
type row struct {
	proto   string
	tsd, vm side
	barrier *side
	more    [][2]side
}

// loadRun is one daemon's load: which daemon ("tsd" or "vm"), its binary
// and data directory, the protocol, and how the loader runs.
type loadRun struct {
	which, bin, dir string
	format          gen.Format
	conns           int
	barrier         bool // telnet: a version barrier every 1,000 lines
	preload         bool // every body encoded before the clock starts
	sizes           bool // settle, measure sizes and run the queries
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "floor" {
		return runFloor(args[1:], stderr)
	}
	f, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdvm: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "tsdvm: "+format+"\n", a...) }
	if err := measure(ctx, f, stdout, logf); err != nil {
		fmt.Fprintf(stderr, "tsdvm: %v\n", err)
		return 1
	}
	return 0
}

func measure(ctx context.Context, f *flags, out io.Writer, logf func(string, ...any)) error {
	work, err := os.MkdirTemp("", "tsdvm-")
	if err != nil {
		return err
	}
	if !f.keep {
		defer os.RemoveAll(work)
	}
	if f.vm == "" {
		if f.vm, err = victoriaMetrics(ctx, logf); err != nil {
			return err
		}
	}
	if f.tsd == "" {
		if f.tsd, err = buildTSD(ctx, work); err != nil {
			return err
		}
	}
	began := time.Now()
	load0 := loadAvg()
	var rows []row
	for i, p := range strings.Split(f.protos, ",") {
		format, err := gen.ParseFormat(p)
		if err != nil {
			return err
		}
		r := row{proto: p}
		prefix := fmt.Sprintf("%s/%d-%s-", work, i, p)
		lr := loadRun{format: format, conns: f.conns, sizes: format == gen.FormatInflux}
		pr, err := loadPair(ctx, f, lr, prefix, "", logf)
		if err != nil {
			return err
		}
		r.tsd, r.vm = pr[0], pr[1]
		if format == gen.FormatTelnet {
			lr := loadRun{which: "tsd", bin: f.tsd, dir: prefix + "tsd-barrier", format: format, conns: f.conns, barrier: true}
			b, err := loadOne(ctx, f, lr, logf)
			if err != nil {
				return err
			}
			r.barrier = &b
		}
		lr.sizes = false
		for k := 1; k < f.pairs; k++ {
			pr, err := loadPair(ctx, f, lr, prefix, fmt.Sprintf("-%d", k), logf)
			if err != nil {
				return err
			}
			r.more = append(r.more, pr)
		}
		rows = append(rows, r)
	}
	if f.tunedConns > 0 {
		r, err := tunedRun(ctx, f, work, logf)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	writeTable(out, f, rows, time.Since(began), load0)
	return nil
}

// tunedRun loads Influx into each daemon with the loader out of the way
// (issue 22's rate figure): every body encoded before the clock starts,
// f.tunedConns connections.
func tunedRun(ctx context.Context, f *flags, work string, logf func(string, ...any)) (row, error) {
	r := row{proto: fmt.Sprintf("influx, loader tuned (bodies encoded before the clock, %d connections)", f.tunedConns)}
	lr := loadRun{format: gen.FormatInflux, conns: f.tunedConns, preload: true}
	pr, err := loadPair(ctx, f, lr, work+"/tuned-", "", logf)
	r.tsd, r.vm = pr[0], pr[1]
	return r, err
}

// loadPair runs lr on tsd, then on VictoriaMetrics, each on the data
// directory prefix + its name + suffix. With lr.sizes both stay up after
// their loads (sizesPair).
func loadPair(ctx context.Context, f *flags, lr loadRun, prefix, suffix string, logf func(string, ...any)) ([2]side, error) {
	if lr.sizes {
		return sizesPair(ctx, f, lr, prefix, suffix, logf)
	}
	var pr [2]side
	for j, lr := range pairRuns(f, lr, prefix, suffix) {
		var err error
		if pr[j], err = loadOne(ctx, f, lr, logf); err != nil {
			return pr, err
		}
	}
	return pr, nil
}

// pairRuns returns lr for tsd and for VictoriaMetrics, each on the data
// directory prefix + its name + suffix.
func pairRuns(f *flags, lr loadRun, prefix, suffix string) [2]loadRun {
	var lrs [2]loadRun
	bins := [2]string{f.tsd, f.vm}
	for j, which := range [2]string{"tsd", "vm"} {
		lrs[j] = lr
		lrs[j].which, lrs[j].bin, lrs[j].dir = which, bins[j], prefix+which+suffix
	}
	return lrs
}

// loadOne starts one daemon on lr.dir, loads the dataset over lr.format
// and stops it.
func loadOne(ctx context.Context, f *flags, lr loadRun, logf func(string, ...any)) (side, error) {
	l, err := startLoaded(ctx, f, lr, logf)
	if err != nil {
		return side{}, err
	}
	l.d.stop()
	return l.s, nil
}

// sizesPair loads tsd, then VictoriaMetrics, and keeps both up: the first
// queries (each daemon's own, right after the loads), the query means
// with rows in the head, each side settled and sized, the query means
// with rows in the store, then each side stopped and sized again. The
// means take turns between the daemons (pairedMeans), so that a slower
// minute of the shared machine falls on both.
func sizesPair(ctx context.Context, f *flags, lr loadRun, prefix, suffix string, logf func(string, ...any)) (pr [2]side, err error) {
	var ls [2]*loaded
	defer func() {
		for _, l := range ls {
			if l != nil {
				l.d.stop()
			}
		}
	}()
	for j, lr := range pairRuns(f, lr, prefix, suffix) {
		if ls[j], err = startLoaded(ctx, f, lr, logf); err != nil {
			return pr, err
		}
	}
	var floor *daemon
	if f.queries > 0 {
		ds := []*daemon{ls[0].d, ls[1].d}
		for j, l := range ls {
			if w := waitQuiet(ctx, ds, j, maxFirstWait); w > 0 {
				logf("%s: waited %v for the other daemon to go quiet before its first queries", l.d.name, w.Round(time.Millisecond))
			}
			cpu0 := cpuOf(ds)
			if l.s.first, err = firstQueries(ctx, f, l.d); err != nil {
				return pr, err
			}
			logf("%s: the first %d queries: median %v, slowest %v%s", l.d.name, firstN, l.s.first.P50, l.s.first.Max, cpuSince(ds, cpu0))
		}
		if floor, err = floorOf(ctx, f, prefix+"floor"+suffix, ls[0].d); err != nil {
			return pr, err
		}
		if floor != nil {
			defer floor.stop()
		}
		if ls[0].s.headMeans, ls[1].s.headMeans, ls[0].s.floorHead, err = pairedMeans(ctx, f, eligible(f), ls[0].d, ls[1].d, floor, 0, logf); err != nil {
			return pr, err
		}
		if ls[0].s.headVaried, ls[1].s.headVaried, err = variedMeans(ctx, f, ls[0].d, ls[1].d, 1, logf); err != nil {
			return pr, err
		}
		if ls[0].s.headTSBS, ls[1].s.headTSBS, err = tsbsMeans(ctx, f, ls[0].d, ls[1].d, 3, logf); err != nil {
			return pr, err
		}
		if ls[0].s.headGrafana, ls[1].s.headGrafana, err = grafanaMeans(ctx, f, ls[0].d, ls[1].d, logf); err != nil {
			return pr, err
		}
	}
	for _, l := range ls {
		if err = l.settle(logf); err != nil {
			return pr, err
		}
	}
	if f.queries > 0 {
		if ls[0].s.queryMeans, ls[1].s.queryMeans, ls[0].s.floorStore, err = pairedMeans(ctx, f, eligible(f), ls[0].d, ls[1].d, floor, 0, logf); err != nil {
			return pr, err
		}
		if ls[0].s.queryVaried, ls[1].s.queryVaried, err = variedMeans(ctx, f, ls[0].d, ls[1].d, 2, logf); err != nil {
			return pr, err
		}
		if ls[0].s.queryTSBS, ls[1].s.queryTSBS, err = tsbsMeans(ctx, f, ls[0].d, ls[1].d, 4, logf); err != nil {
			return pr, err
		}
		if ls[0].s.queryGrafana, ls[1].s.queryGrafana, err = grafanaMeans(ctx, f, ls[0].d, ls[1].d, logf); err != nil {
			return pr, err
		}
	}
	for j, l := range ls {
		if err = l.finish(ctx, logf); err != nil {
			return pr, err
		}
		pr[j] = l.s
	}
	return pr, nil
}

// eligible is the query set's queries for the dataset: its shape, a range
// within its span.
func eligible(f *flags) []*queryset.Query { return eligibleOf(f, queryset.Set) }

// eligibleOf is the queries of set for the dataset, as eligible's.
func eligibleOf(f *flags, set []queryset.Query) []*queryset.Query {
	var qs []*queryset.Query
	for i := range set {
		if q := &set[i]; q.Shape == f.cfg.Shape && q.Range <= f.cfg.Span {
			qs = append(qs, q)
		}
	}
	return qs
}

// firstQueries are the first firstN queries d answers after the load, the
// eligible set in turn, before anything settles: tsd answers them from
// the head's rows, VictoriaMetrics from its in-memory parts.
func firstQueries(ctx context.Context, f *flags, d *daemon) (queryset.Stats, error) {
	c := &queryset.Client{Base: "http://" + d.http}
	defer c.Close()
	st := c.Cycle(ctx, queryset.PromQL, eligible(f), queryset.End(f.cfg.Span), firstN)
	if st.Errors > 0 {
		return st, fmt.Errorf("%s first queries: %d errors, first %v", d.name, st.Errors, st.FirstError)
	}
	return st, nil
}

// meanRounds is how many turns pairedMeans gives each daemon per query:
// f.queries runs, f.turnRuns a turn.
func meanRounds(f *flags) int { return max(1, (f.queries+f.turnRuns-1)/f.turnRuns) }

// pairedMeans runs each query of qs f.queries times on a and on b, in
// meanRounds turns (a's share, then b's, and again), and returns each
// daemon's means by query name. A floor, when given, takes its turn after
// b's on floorQuery, and its mean there is returned too. With vary
// non-zero, each run is a query drawn by Query.Varied, the same draws on
// each side of a turn (varyRNG, vary its stream), and the floor takes no
// turn.
func pairedMeans(ctx context.Context, f *flags, qs []*queryset.Query, a, b, floor *daemon, vary int, logf func(string, ...any)) (ma, mb map[string]time.Duration, fr floorRun, err error) {
	if vary != 0 {
		floor = nil
	}
	ds := []*daemon{a, b, floor}
	cs := make([]*queryset.Client, len(ds))
	for i, d := range ds {
		if d != nil {
			cs[i] = &queryset.Client{Base: "http://" + d.http}
			if f.asGrafana {
				cs[i] = queryset.Grafana("http://" + d.http)
			}
			defer cs[i].Close()
		}
	}
	end := queryset.End(f.cfg.Span)
	if err := warmConns(ctx, f, ds, cs, end, logf); err != nil {
		return nil, nil, fr, err
	}
	ma, mb = map[string]time.Duration{}, map[string]time.Duration{}
	rounds := meanRounds(f)
	for qi, q := range qs {
		sides := 2
		if floor != nil && q.Name == floorQuery {
			sides = 3
		}
		var sum [3]time.Duration
		var runs [3]int
		for r := range rounds {
			n := f.queries / rounds
			if r < f.queries%rounds {
				n++
			}
			for i, c := range cs[:sides] {
				waited := waitQuiet(ctx, ds, i, maxQuietWait)
				cpu0 := cpuOf(ds)
				var st queryset.Stats
				if vary != 0 {
					rng := varyRNG(vary, qi, r)
					st = c.RepeatEach(ctx, queryset.PromQL, n, func() (*queryset.Query, time.Time) {
						return q.Varied(rng, f.cfg.Hosts, f.cfg.Span)
					})
				} else {
					st = c.Repeat(ctx, queryset.PromQL, q, end, n)
				}
				if st.Errors > 0 {
					return nil, nil, fr, fmt.Errorf("%s query %s: %d errors, first %v", ds[i].name, q.Name, st.Errors, st.FirstError)
				}
				if sides == 3 && st.P50 < hotTurn {
					fr.hot[i]++
				}
				if f.turns {
					logf("%s %s%s turn %d of %d: %d runs, mean %v, median %v, slowest %v%s%s", ds[i].name, q.Name, runNote(vary != 0, f.asGrafana), r+1, rounds, st.Runs, st.Mean, st.P50, st.Max, cpuSince(ds, cpu0), waitedNote(waited))
				}
				sum[i] += st.Mean * time.Duration(st.Runs)
				runs[i] += st.Runs
			}
		}
		ma[q.Name], mb[q.Name] = sum[0]/time.Duration(runs[0]), sum[1]/time.Duration(runs[1])
		if sides == 3 {
			fr.mean, fr.turns = sum[2]/time.Duration(runs[2]), rounds
		}
	}
	return ma, mb, fr, nil
}

// variedMeans is pairedMeans of varied runs, when f asks for them
// (-vary), drawn from stream (1 with rows in the head, 2 in the store:
// the second set of means must not meet the answers of the first).
func variedMeans(ctx context.Context, f *flags, a, b *daemon, stream int, logf func(string, ...any)) (ma, mb map[string]time.Duration, err error) {
	if !f.vary {
		return nil, nil, nil
	}
	ma, mb, _, err = pairedMeans(ctx, f, eligible(f), a, b, nil, stream, logf)
	return ma, mb, err
}

// tsbsMeans is pairedMeans of TSBS's queries (queryset.TSBS) drawn as
// varied runs are, from stream (3 with rows in the head, 4 in the
// store), when f asks for them (-tsbs) and the dataset has them.
func tsbsMeans(ctx context.Context, f *flags, a, b *daemon, stream int, logf func(string, ...any)) (ma, mb map[string]time.Duration, err error) {
	qs := eligibleOf(f, queryset.TSBS)
	if !f.tsbs || len(qs) == 0 {
		return nil, nil, nil
	}
	g := *f
	g.queries = f.tsbsRuns()
	ma, mb, _, err = pairedMeans(ctx, &g, qs, a, b, nil, stream, logf)
	return ma, mb, err
}

// grafanaMeans is pairedMeans of the set's queries sent as Grafana's
// Prometheus data source sends them (queryset.Grafana), when f asks for
// them (-grafana). The floor, which answers GETs alone, takes no turn.
func grafanaMeans(ctx context.Context, f *flags, a, b *daemon, logf func(string, ...any)) (ma, mb map[string]time.Duration, err error) {
	if !f.grafana {
		return nil, nil, nil
	}
	g := *f
	g.asGrafana = true
	ma, mb, _, err = pairedMeans(ctx, &g, eligible(f), a, b, nil, 0, logf)
	return ma, mb, err
}

// tsbsRuns is the runs of each TSBS query type on each side.
func (f *flags) tsbsRuns() int {
	if f.tsbsN > 0 {
		return f.tsbsN
	}
	return f.queries
}

// varyRNG is the draw of the varied runs of query qi's turn r in stream:
// seeded by all three, so each side of a turn gets the same queries, and
// each turn and stream others.
func varyRNG(stream, qi, r int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(stream)<<32|uint64(qi), uint64(r)))
}

// runNote names, in a turn's log line, how its runs were drawn or sent.
func runNote(vary, grafana bool) string {
	switch {
	case vary:
		return " (varied)"
	case grafana:
		return " (as Grafana)"
	}
	return ""
}

// cpuOf reads the CPU time each daemon's process has used so far, -1
// for one without a process of its own (a test's server) or unreadable.
func cpuOf(ds []*daemon) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = -1
		if d != nil && d.cmd != nil && d.cmd.Process != nil {
			if c, err := procstat.CPUTime(d.pid()); err == nil {
				out[i] = c
			}
		}
	}
	return out
}

// cpuSince describes the CPU each daemon used since cpu0 (cpuOf): a
// turn's log line shows whether the side not being timed was busy (its
// background merges or flushes) while the other's answers were timed.
// Empty when no daemon's CPU is known.
func cpuSince(ds []*daemon, cpu0 []time.Duration) string {
	cpu1 := cpuOf(ds)
	var b strings.Builder
	for i, d := range ds {
		if cpu0[i] < 0 || cpu1[i] < 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("; CPU meanwhile:")
		}
		fmt.Fprintf(&b, " %s %.1f ms", d.name, float64(cpu1[i]-cpu0[i])/1e6)
	}
	return b.String()
}

// Before a daemon's turn, the others must be quiet: at most quietCPU of
// CPU in a quietSpan, waited for up to maxQuietWait. A turn is a few
// milliseconds; VictoriaMetrics merging its in-memory parts used 14 ms
// of CPU during one of tsd's max-all-8 turns, whose slowest run took
// 25 ms against a median of 1.8 (2026-11-30, 15:05): the timed side
// paid for the other's background work. A daemon's own background work
// stays in its turns.
// The first 20 queries after the loads wait up to maxFirstWait: the
// daemon loaded second is still merging or flushing what it just took
// when the first one's queries begin (in two runs at 4a5da57 and
// c714721, tsd's slowest of the first 20 took 23 and 29 ms, against
// 6-10 ms in the five runs before).
const (
	quietSpan    = 50 * time.Millisecond
	quietCPU     = time.Millisecond
	maxQuietWait = 3 * time.Second
	maxFirstWait = 30 * time.Second
)

// waitQuiet waits until every daemon but ds[timed] with a process of its
// own used at most quietCPU in quietSpan, or limit has passed, and
// returns how long it waited beyond the first span.
func waitQuiet(ctx context.Context, ds []*daemon, timed int, limit time.Duration) time.Duration {
	others := make([]*daemon, 0, len(ds))
	for j, d := range ds {
		if j != timed {
			others = append(others, d)
		}
	}
	start := time.Now()
	prev := cpuOf(others)
	if !slices.ContainsFunc(prev, func(c time.Duration) bool { return c >= 0 }) {
		return 0 // no process to watch (a test's servers)
	}
	for time.Since(start) < limit && ctx.Err() == nil {
		time.Sleep(quietSpan)
		cur := cpuOf(others)
		busy := false
		for j := range cur {
			if cur[j] >= 0 && prev[j] >= 0 && cur[j]-prev[j] > quietCPU {
				busy = true
			}
		}
		if !busy {
			break
		}
		prev = cur
	}
	return max(time.Since(start)-quietSpan, 0)
}

// waitedNote tells a turn's wait for the others to be quiet, when there
// was one worth telling.
func waitedNote(d time.Duration) string {
	if d < 10*time.Millisecond {
		return ""
	}
	return fmt.Sprintf("; waited %v for the others to go quiet", d.Round(time.Millisecond))
}

// warmConns runs the first eligible query once on each client's new
// connection, off the clock, and logs its time. A server's first answer
// on a connection carries the connection's set-up (its goroutine, its
// buffers, the first wake-up): 0.3-1 ms here for tsd, VictoriaMetrics and
// the floor alike, several times a cached answer. Timed, it fell on
// whichever side went first and weighed most against the smallest mean;
// a dashboard keeps its connections open. firstQueries still times the
// first answers on a new connection.
func warmConns(ctx context.Context, f *flags, ds []*daemon, cs []*queryset.Client, end time.Time, logf func(string, ...any)) error {
	qs := eligible(f)
	if len(qs) == 0 {
		return nil
	}
	for i, c := range cs {
		if c == nil {
			continue
		}
		d, err := c.Do(ctx, queryset.PromQL, qs[0], end)
		if err != nil {
			return fmt.Errorf("%s: warming its connection with %s: %w", ds[i].name, qs[0].Name, err)
		}
		logf("%s: the first answer on its connection (%s, not in the means): %v", ds[i].name, qs[0].Name, d)
	}
	return nil
}

// firstN is how many queries after the load firstQueries times (issue 22:
// the slowest of the first 20 at most 10x their median).
const firstN = 20

// shards makes one generator per connection, each carrying its own hosts.
func shards(f *flags, format gen.Format, batch, conns int) ([]load.Source, error) {
	n := max(conns, 1)
	srcs := make([]load.Source, n)
	for i := range srcs {
		g, err := gen.New(f.cfg)
		if err != nil {
			return nil, err
		}
		g.Shard(i, n)
		srcs[i] = load.NewGenSource(g, format, batch, 0)
	}
	return srcs, nil
}

// medianLine writes a figure over every pair of loads: each side's
// values in load order, and the median of the pairs' ratios (each pair
// ran back to back, so a slower minute of the machine falls on both).
func medianLine(w io.Writer, name string, pairs [][2]side, val func(side) float64, unit string, prec int) {
	var a, b []string
	var ratios []float64
	for _, pr := range pairs {
		x, y := val(pr[0]), val(pr[1])
		a = append(a, fmt.Sprintf("%.*f", prec, x))
		b = append(b, fmt.Sprintf("%.*f", prec, y))
		if y > 0 {
			ratios = append(ratios, x/y)
		}
	}
	if len(ratios) == 0 {
		return
	}
	slices.Sort(ratios)
	rs := make([]string, len(ratios))
	for i, r := range ratios {
		rs[i] = fmt.Sprintf("%.2f", r)
	}
	fmt.Fprintf(w, "| %s, %d pairs in turn: median ratio | %s %s | %s %s | %.2fx (%s) |\n",
		name, len(pairs), strings.Join(a, ", "), unit, strings.Join(b, ", "), unit, ratios[len(ratios)/2], strings.Join(rs, ", "))
}

// meanLines writes one row per query of the set that tsd ran, its mean
// on both sides.
func meanLines(line func(string, float64, float64, string, int), n int, where string, tsd, vm map[string]time.Duration) {
	for _, set := range [][]queryset.Query{queryset.Set, queryset.TSBS} {
		for i := range set {
			q := set[i].Name
			a, ok := tsd[q]
			if !ok {
				continue
			}
			b := vm[q]
			line(fmt.Sprintf("PromQL %s, %s, mean of %d ↓", q, where, n), float64(a.Microseconds())/1e3, float64(b.Microseconds())/1e3, "ms", 2)
		}
	}
}

// floorLine writes the floor's mean beside VictoriaMetrics' on
// floorQuery, when it ran.
func floorLine(w io.Writer, line func(string, float64, float64, string, int), n int, where string, fr floorRun, vm map[string]time.Duration) {
	if fr.mean <= 0 {
		return
	}
	line(fmt.Sprintf("PromQL %s, %s, mean of %d: the floor (its answer's bytes from a process that computes nothing) in tsd's column ↓", floorQuery, where, n),
		float64(fr.mean.Microseconds())/1e3, float64(vm[floorQuery].Microseconds())/1e3, "ms", 2)
	fmt.Fprintf(w, "| PromQL %s, %s: turns at loopback speed (median under %v; the floor's in the last column) | %d of %d | %d of %d | floor %d of %d |\n",
		floorQuery, where, hotTurn, fr.hot[0], fr.turns, fr.hot[1], fr.turns, fr.hot[2], fr.turns)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:1], "")
}

func writeTable(w io.Writer, f *flags, rows []row, took time.Duration, load0 string) {
	fmt.Fprintf(w, "tsdvm: %s %d hosts x %v, %s values, %d loader connections, tsd rollups %v, %v, load average %s at start, %s at end\n",
		f.shape, f.cfg.Hosts, f.cfg.Span, f.values, f.conns, onOff(f.rollups), took.Round(time.Second), load0, loadAvg())
	fmt.Fprintf(w, "machine: %d logical CPUs (GOMAXPROCS %d), %s %s/%s, VictoriaMetrics %s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, vmVersion)
	fmt.Fprintln(w, "| figure | tsd | VictoriaMetrics | ratio |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	line := func(name string, a, b float64, unit string, prec int) {
		ratio := "n/a"
		if b > 0 {
			ratio = fmt.Sprintf("%.2fx", a/b)
		}
		fmt.Fprintf(w, "| %s | %.*f %s | %.*f %s | %s |\n", name, prec, a, unit, prec, b, unit, ratio)
	}
	perM := func(s side) float64 {
		if s.res.Server == nil || s.points == 0 {
			return 0
		}
		return s.res.Server.CPUSeconds / float64(s.points) * 1e6
	}
	for _, r := range rows {
		p := r.proto
		if p == "telnet" {
			p = "telnet, no barrier"
		}
		line(p+": points/s ↑", r.tsd.res.PointsPerSecond()/1e6, r.vm.res.PointsPerSecond()/1e6, "M", 2)
		line(p+": daemon CPU per million points ↓", perM(r.tsd), perM(r.vm), "s", 3)
		if r.tsd.res.Server != nil && r.vm.res.Server != nil {
			line(p+": daemon peak RSS ↓", float64(r.tsd.res.Server.PeakRSS)/1e6, float64(r.vm.res.Server.PeakRSS)/1e6, "MB", 0)
		}
		line(p+": loader CPU per million points", r.tsd.loaderCPU/float64(r.tsd.points)*1e6, r.vm.loaderCPU/float64(r.vm.points)*1e6, "s", 3)
		if len(r.more) > 0 {
			pairs := append([][2]side{{r.tsd, r.vm}}, r.more...)
			medianLine(w, p+": points/s", pairs, func(s side) float64 { return s.res.PointsPerSecond() / 1e6 }, "M", 2)
			medianLine(w, p+": daemon CPU per million points", pairs, perM, "s", 3)
			medianLine(w, p+": daemon peak RSS", pairs, func(s side) float64 {
				if s.res.Server == nil {
					return 0
				}
				return float64(s.res.Server.PeakRSS) / 1e6
			}, "MB", 0)
		}
		if r.barrier != nil {
			b := r.barrier
			fmt.Fprintf(w, "| telnet, tsd with a version barrier every 1,000 lines | %.2f M points/s, %.3f s CPU per million points, %.0f MB peak RSS | (no barrier) | |\n",
				b.res.PointsPerSecond()/1e6, perM(*b), float64(b.res.Server.PeakRSS)/1e6)
		}
		if r.tsd.settleCPU > 0 && r.vm.settleCPU > 0 {
			line(p+": daemon CPU per million points, load and settling ↓", r.tsd.settleCPU/float64(r.tsd.points)*1e6, r.vm.settleCPU/float64(r.vm.points)*1e6, "s", 3)
		}
		if r.tsd.bytes > 0 {
			line(p+": bytes/point on disk, settled ↓", float64(r.tsd.bytes)/float64(r.tsd.points), float64(r.vm.bytes)/float64(r.vm.points), "B", 3)
			line(p+": disk right after a clean stop, against settled ↓", float64(r.tsd.stopped)/float64(r.tsd.bytes), float64(r.vm.stopped)/float64(r.vm.bytes), "x", 2)
			fmt.Fprintf(w, "| %s: tsd running, after POST /api/compact (with the logs pebble keeps for reuse) | %.3f B/point | | |\n",
				p, float64(r.tsd.running)/float64(r.tsd.points))
		}
		if r.tsd.first.Runs > 0 && r.vm.first.Runs > 0 {
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
			line(fmt.Sprintf("PromQL, the first %d queries after the load (query set in turn, rows in the head): median ↓", firstN),
				ms(r.tsd.first.P50), ms(r.vm.first.P50), "ms", 2)
			line(fmt.Sprintf("PromQL, the first %d queries after the load: slowest ↓", firstN), ms(r.tsd.first.Max), ms(r.vm.first.Max), "ms", 2)
			line(fmt.Sprintf("PromQL, the first %d queries after the load: slowest against median (target ≤ 10x) ↓", firstN),
				ms(r.tsd.first.Max)/ms(r.tsd.first.P50), ms(r.vm.first.Max)/ms(r.vm.first.P50), "x", 1)
		}
		meanLines(line, f.queries, "rows in the head", r.tsd.headMeans, r.vm.headMeans)
		floorLine(w, line, f.queries, "rows in the head", r.tsd.floorHead, r.vm.headMeans)
		meanLines(line, f.queries, "rows in the store", r.tsd.queryMeans, r.vm.queryMeans)
		floorLine(w, line, f.queries, "rows in the store", r.tsd.floorStore, r.vm.queryMeans)
		meanLines(line, f.queries, "rows in the head, varied (each run other hosts and end)", r.tsd.headVaried, r.vm.headVaried)
		meanLines(line, f.queries, "rows in the store, varied", r.tsd.queryVaried, r.vm.queryVaried)
		meanLines(line, f.tsbsRuns(), "rows in the head, TSBS's query (drawn as varied)", r.tsd.headTSBS, r.vm.headTSBS)
		meanLines(line, f.tsbsRuns(), "rows in the store, TSBS's query", r.tsd.queryTSBS, r.vm.queryTSBS)
		meanLines(line, f.queries, "rows in the head, sent as Grafana sends it (POST form, gzip, Go's client)", r.tsd.headGrafana, r.vm.headGrafana)
		meanLines(line, f.queries, "rows in the store, sent as Grafana sends it", r.tsd.queryGrafana, r.vm.queryGrafana)
	}
	fmt.Fprintln(w, "\nratio = tsd / VictoriaMetrics. Sizes are allocated blocks: VictoriaMetrics after force_flush and force_merge, without cache/;\n"+
		"tsd after POST /api/compact, a clean stop and tsd compact --data (what a restart leaves).")
}
