package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/load"
	"github.com/tsd-db/tsd/bench/queryset"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type flags struct {
	bin     string
	hosts   int
	span    time.Duration
	clients int
	n       int
	head    bool
	settle  time.Duration
	hold    time.Duration
	after   time.Duration
	tsdArgs string
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("tsdstall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.bin, "bin", "", "tsd binary (default: build ./cmd/tsd into a temporary directory)")
	fs.IntVar(&f.hosts, "hosts", 1000, "series of cpu_usage_user (the highcard shape), one per host")
	fs.DurationVar(&f.span, "span", 2*time.Hour, "span of the data and of the large query")
	fs.IntVar(&f.clients, "clients", 100, "clients that send the large query and never read")
	fs.IntVar(&f.n, "n", 500, "healthy queries timed idle and again while the clients stall (and as many GET /api/version, the floor)")
	fs.BoolVar(&f.head, "head", false, "query the rows in the head (no restart after the load, which flushes them to the store)")
	fs.DurationVar(&f.settle, "settle", time.Minute, "longest wait for the stalled clients' queries to finish or block before measuring")
	fs.DurationVar(&f.hold, "hold", 5*time.Second, "how long to keep sampling the resident set once the stalled queries settled")
	fs.DurationVar(&f.after, "after", 10*time.Second, "how long after the stalled clients close to read the resident set again")
	fs.StringVar(&f.tsdArgs, "tsd-args", "", "more tsd flags, space-separated (e.g. --tsd.query.max_concurrent=8)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.hosts < 1 || f.clients < 1 || f.n < 1 || f.span < time.Minute {
		return nil, errors.New("-hosts, -clients and -n must be positive and -span at least a minute")
	}
	return f, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdstall: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := measure(ctx, f, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdstall: %v\n", err)
		return 1
	}
	r.print(stdout, f)
	return 0
}

// result is one run's figures.
type result struct {
	points              int
	answerBytes         int
	rssIdle, rssStalled int64
	rssAfter            int64
	settled, sampled    time.Duration
	// before, stalled and after are the healthy client's timings idle
	// before the stall, during it, and idle again after it.
	before, stalled, after timings
}

// timings are one phase's runs of the healthy client: each small query
// and the floor n times, the large query read whole nBig times.
type timings struct {
	small []queryset.Stats // per query of smallQueries
	cpu   []float64        // the daemon's CPU seconds over each small query's runs
	floor queryset.Stats
	big   queryset.Stats
}

// nBig is how often a phase reads the large answer whole.
const nBig = 5

// measure runs the whole experiment on a fresh daemon.
func measure(ctx context.Context, f *flags, stderr io.Writer) (*result, error) {
	tmp, err := os.MkdirTemp("", "tsdstall")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := f.bin
	if bin == "" {
		fmt.Fprintln(stderr, "tsdstall: building ./cmd/tsd")
		if bin, err = buildTSD(tmp); err != nil {
			return nil, err
		}
	}
	extra := strings.Fields(f.tsdArgs)
	d, points, err := loaded(ctx, f, bin, tmp+"/data", extra, stderr)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	return phases(ctx, f, d, points, stderr)
}

// loaded starts a daemon, loads the data and, unless -head, restarts it so
// the rows are in the store.
func loaded(ctx context.Context, f *flags, bin, dir string, extra []string, stderr io.Writer) (*daemon, int, error) {
	d, err := startDaemon(ctx, bin, dir, extra)
	if err != nil {
		return nil, 0, err
	}
	cfg := gen.Config{Hosts: f.hosts, Span: f.span, Shape: gen.ShapeHighCard}
	points, err := loadData(ctx, d.addr, cfg)
	if err != nil {
		d.stop()
		return nil, 0, err
	}
	fmt.Fprintf(stderr, "tsdstall: loaded %d points on %s\n", points, d.addr)
	if f.head {
		return d, points, nil
	}
	if err := d.stop(); err != nil {
		return nil, 0, fmt.Errorf("stop after the load: %w\n%s", err, d.logs)
	}
	d, err = startDaemon(ctx, bin, dir, extra)
	return d, points, err
}

// loadData sends the dataset over telnet, four connections.
func loadData(ctx context.Context, addr string, cfg gen.Config) (int, error) {
	const conns = 4
	srcs := make([]load.Source, conns)
	for i := range srcs {
		g, err := gen.New(cfg)
		if err != nil {
			return 0, err
		}
		g.Shard(i, conns)
		srcs[i] = load.NewGenSource(g, gen.FormatTelnet, 5000, 0)
	}
	res, err := load.RunSharded(ctx, load.Options{Addr: addr, Format: gen.FormatTelnet, Conns: conns}, srcs)
	if err != nil {
		return 0, err
	}
	if res.Errors > 0 {
		return 0, fmt.Errorf("load: %d errors: %v", res.Errors, res.ErrorSamples)
	}
	return int(res.Points), nil
}

// smallQueries are the healthy client's dashboard panels: one host and
// ten hosts by host, one hour at 1m-max (the query set's single-1h and
// highcard-10).
var smallQueries = []string{"single-1h", "highcard-10"}

// queries returns the small queries and the large one (every series, the
// whole span, raw, grouped by host: one group per series).
func queries(f *flags) (small []*queryset.Query, big *queryset.Query) {
	for _, name := range smallQueries {
		if q, err := queryset.ByName(name); err == nil {
			small = append(small, q)
		}
	}
	big = &queryset.Query{Name: "all-raw", Range: f.span, OpenTSDB: []queryset.SubQuery{{
		Metric: "cpu_usage_user", Aggregator: "sum",
		Filters: []queryset.Filter{{Type: "wildcard", Tagk: "hostname", Filter: "*", GroupBy: true}},
	}}}
	return small, big
}

// phases measures the healthy client idle, then with f.clients stalled
// clients, then idle again after they closed: comparing the stall with
// both idle phases, before and after it, cancels the drift of a shared
// machine's speed.
func phases(ctx context.Context, f *flags, d *daemon, points int, stderr io.Writer) (*result, error) {
	small, big := queries(f)
	end := queryset.End(f.span)
	r := &result{points: points}
	c := &queryset.Client{Base: "http://" + d.addr}
	defer c.Close()
	var err error
	if r.answerBytes, err = answerSize(ctx, d.addr, big, end); err != nil {
		return nil, err
	}
	c.Repeat(ctx, queryset.OpenTSDB, big, end, 2) // warms the caches and the connection
	if r.before, err = timePhase(ctx, c, d, small, big, end, f.n); err != nil {
		return nil, err
	}
	if r.rssIdle, err = rssNow(d.pid()); err != nil {
		return nil, err
	}
	if err := stalled(ctx, f, d, r, c, small, big, end, stderr); err != nil {
		return nil, err
	}
	time.Sleep(f.after)
	if r.rssAfter, err = rssNow(d.pid()); err != nil {
		return nil, err
	}
	r.after, err = timePhase(ctx, c, d, small, big, end, f.n)
	return r, err
}

// stalled opens the stalled clients, waits for their queries to settle,
// samples the resident set while the healthy client runs, and closes them.
func stalled(ctx context.Context, f *flags, d *daemon, r *result, c *queryset.Client, small []*queryset.Query, big *queryset.Query, end time.Time, log io.Writer) error {
	s, err := stall(ctx, d.addr, f.clients, postRequest(d.addr, "/api/query", big.OpenTSDBBody(end)))
	if err != nil {
		return err
	}
	defer s.close()
	sampler := sampleRSS(d.pid())
	began := time.Now()
	if r.settled, err = settle(d.pid(), f.settle); err != nil {
		sampler.done()
		return err
	}
	time.Sleep(f.hold)
	r.stalled, err = timePhase(ctx, c, d, small, big, end, f.n)
	peak, serr := sampler.done()
	r.rssStalled, r.sampled = peak, time.Since(began)
	fmt.Fprintf(log, "tsdstall: stalled clients closing after %v\n", r.sampled.Round(time.Millisecond))
	return errors.Join(err, serr)
}

// timePhase runs the healthy client: each small query and the floor n
// times, the large query nBig times.
func timePhase(ctx context.Context, c *queryset.Client, d *daemon, small []*queryset.Query, big *queryset.Query, end time.Time, n int) (timings, error) {
	var t timings
	for _, q := range small {
		before, err := cpuNow(d.pid())
		if err != nil {
			return t, err
		}
		t.small = append(t.small, c.Repeat(ctx, queryset.OpenTSDB, q, end, n))
		after, err := cpuNow(d.pid())
		if err != nil {
			return t, err
		}
		t.cpu = append(t.cpu, after-before)
	}
	t.floor = c.Floor(ctx, n)
	t.big = c.Repeat(ctx, queryset.OpenTSDB, big, end, nBig)
	return t, firstError(append(t.small, t.floor, t.big)...)
}

// answerSize reads the large answer once, uncompressed, and returns its
// length.
func answerSize(ctx context.Context, addr string, big *queryset.Query, end time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/query",
		bytes.NewReader(big.OpenTSDBBody(end)))
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("large query: status %d", resp.StatusCode)
	}
	return int(n), err
}

func firstError(ss ...queryset.Stats) error {
	for _, s := range ss {
		if s.FirstError != nil {
			return s.FirstError
		}
	}
	return nil
}

func (r *result) print(w io.Writer, f *flags) {
	where := "store"
	if f.head {
		where = "head"
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	fmt.Fprintf(w, "tsdstall: %d series x %v (%d points, rows in the %s), large answer %.1f MB (%d bytes), %d stalled clients\n",
		f.hosts, f.span, r.points, where, float64(r.answerBytes)/1e6, r.answerBytes, f.clients)
	fmt.Fprintf(w, "rss: idle %.1f MiB, stalled %.1f MiB (peak of 0.1 s samples over %v; queries settled in %v): %+.1f MiB, %.2fx; %.1f MiB after they closed (%v)\n",
		mib(r.rssIdle), mib(r.rssStalled), r.sampled.Round(100*time.Millisecond), r.settled.Round(100*time.Millisecond),
		mib(r.rssStalled-r.rssIdle), float64(r.rssStalled)/float64(r.rssIdle), mib(r.rssAfter), f.after)
	for i, name := range smallQueries {
		row(w, "healthy "+name, f.n, r.before.small[i], r.stalled.small[i], r.after.small[i],
			fmt.Sprintf("; daemon CPU over the runs %.2f s idle before, %.2f s stalled", r.before.cpu[i], r.stalled.cpu[i]))
	}
	row(w, "floor (GET /api/version)", f.n, r.before.floor, r.stalled.floor, r.after.floor, "")
	row(w, "healthy client reading the large answer whole", nBig, r.before.big, r.stalled.big, r.after.big, "")
}

// row prints one query's means idle before, stalled and idle after, and
// the stall's ratio to the two idle means' average.
func row(w io.Writer, name string, n int, before, stalled, after queryset.Stats, extra string) {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	idle := (before.Mean + after.Mean) / 2
	fmt.Fprintf(w, "%s: mean %.3f ms idle before, %.3f ms stalled, %.3f ms idle after (%d runs each): %.2fx%s\n",
		name, ms(before.Mean), ms(stalled.Mean), ms(after.Mean), n, float64(stalled.Mean)/float64(idle), extra)
}
