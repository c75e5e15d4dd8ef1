package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/load"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type flags struct {
	o      load.Options
	proto  string
	batch  int
	limit  int
	file   string
	cfg    gen.Config
	values string
	shape  string
	prof   string
	runs   int
	route  string
	tlsCA  string // -tls-ca: send over TLS, trusting this CA
	// tlsCompare alternates plaintext and TLS runs on the same daemon
	// and prints both medians and their ratio.
	tlsCompare bool
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("tsdload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.o.Addr, "addr", "127.0.0.1:4242", "server host:port")
	fs.StringVar(&f.proto, "proto", "telnet", "protocol: telnet, json, influx or remotewrite")
	fs.StringVar(&f.o.Path, "path", "", "HTTP path and query (default per protocol: /api/put, /write?precision=ns, /api/v1/write)")
	fs.IntVar(&f.o.Conns, "conns", 4, "connections, one sender each")
	fs.IntVar(&f.batch, "batch", 1000, "points per request (telnet: lines between barriers; influx: field values, rounded to whole lines, so devops' 10 fields a line make -batch 100000 a 10,000-line request)")
	fs.BoolVar(&f.o.NoBarrier, "no-barrier", false, "telnet: stream without the version barrier (no latency)")
	fs.IntVar(&f.o.BarrierLines, "barrier-lines", 2, "telnet: lines the server answers to version")
	fs.DurationVar(&f.o.Timeout, "timeout", time.Minute, "per-request timeout")
	fs.BoolVar(&f.o.Preload, "preload", false, "encode every request before the clock starts")
	fs.IntVar(&f.o.PID, "pid", 0, "server pid for CPU and memory from /proc (0: skip)")
	fs.StringVar(&f.o.User, "user", "", "user for Basic credentials (HTTP) and auth basic (telnet), when tsd has tsd.auth.config")
	fs.StringVar(&f.o.Password, "password", "", "password of -user")
	fs.StringVar(&f.o.Token, "token", "", "bearer token (HTTP) and auth token (telnet), when tsd has tsd.auth.config")
	fs.IntVar(&f.limit, "limit", 0, "stop after this many points (0: whole dataset)")
	fs.StringVar(&f.file, "file", "", "send this file of telnet or Influx lines instead of generating")
	fs.IntVar(&f.cfg.Hosts, "hosts", 100, "dataset hosts")
	fs.DurationVar(&f.cfg.Span, "span", 24*time.Hour, "dataset span")
	fs.Uint64Var(&f.cfg.Seed, "seed", 1, "dataset seed")
	fs.StringVar(&f.values, "values", "int", "value mode: int or float")
	fs.StringVar(&f.shape, "shape", "devops", "dataset shape: devops, highcard or counters")
	fs.StringVar(&f.route, "route", "host", "generated data: host (each connection carries its own hosts, encoded by its own goroutine, as collectors do) or batch (one encoder, batches round robin over the connections)")
	fs.IntVar(&f.runs, "runs", 1, "runs, each on the next span of the dataset; more than 1 also prints the median")
	fs.StringVar(&f.prof, "cpuprofile", "", "write the load generator's CPU profile to this file")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "send over TLS (https for HTTP), trusting this PEM CA file")
	fs.BoolVar(&f.tlsCompare, "tls-compare", false, "with -tls-ca: alternate plaintext and TLS runs (-runs of each) and print both medians and the TLS/plaintext ratio")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-tls-ca %s: no PEM certificate", f.tlsCA)
		}
		f.o.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	} else if f.tlsCompare {
		return nil, errors.New("-tls-compare needs -tls-ca")
	}
	var err error
	if f.o.Format, err = gen.ParseFormat(f.proto); err != nil {
		return nil, err
	}
	if f.cfg.Values, err = gen.ParseValueMode(f.values); err != nil {
		return nil, err
	}
	if f.route != "host" && f.route != "batch" {
		return nil, fmt.Errorf("-route %q: want host or batch", f.route)
	}
	if f.runs < 1 {
		return nil, fmt.Errorf("-runs %d: want at least 1", f.runs)
	}
	f.cfg.Shape, err = gen.ParseShape(f.shape)
	return f, err
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdload: %v\n", err)
		return 2
	}
	if f.prof != "" {
		stopProf, err := startProfile(f.prof)
		if err != nil {
			fmt.Fprintf(stderr, "tsdload: %v\n", err)
			return 2
		}
		defer stopProf()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if f.tlsCompare {
		return runTLSCompare(ctx, f, stdout, stderr)
	}
	var results []*load.Result
	for i := range f.runs {
		res, code := runOnce(ctx, f, i, stdout, stderr)
		if code != 0 {
			return code
		}
		results = append(results, res)
	}
	if f.runs > 1 {
		reportMedian(stdout, f, results)
	}
	return 0
}

// runOnce sends the dataset once; run i of a generated dataset starts i
// spans after the first, so no run rewrites the points of another.
func runOnce(ctx context.Context, f *flags, i int, stdout, stderr io.Writer) (*load.Result, int) {
	cfg := f.cfg
	cfg.EnsureDefaults()
	cfg.Start = cfg.Start.Add(time.Duration(i) * cfg.Span)
	var res *load.Result
	var err error
	if f.route == "host" && f.file == "" {
		srcs, serr := shards(f, cfg)
		if serr != nil {
			fmt.Fprintf(stderr, "tsdload: %v\n", serr)
			return nil, 2
		}
		res, err = load.RunSharded(ctx, f.o, srcs)
	} else {
		src, closeSrc, serr := source(f, cfg)
		if serr != nil {
			fmt.Fprintf(stderr, "tsdload: %v\n", serr)
			return nil, 2
		}
		defer closeSrc()
		res, err = load.Run(ctx, f.o, src)
	}
	if res != nil {
		report(stdout, f, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsdload: %v\n", err)
		return nil, 1
	}
	if res.Errors > 0 {
		return nil, 1
	}
	return res, 0
}

// reportMedian prints the median run's rate and server cost.
func reportMedian(w io.Writer, f *flags, rs []*load.Result) {
	rates := make([]float64, len(rs))
	cpu := make([]float64, 0, len(rs))
	for i, r := range rs {
		rates[i] = r.PointsPerSecond()
		if r.Server != nil && r.Points > 0 {
			cpu = append(cpu, r.Server.CPUSeconds/float64(r.Points)*1e6)
		}
	}
	fmt.Fprintf(w, "median of %d runs: %.0f points/s", len(rs), median(rates))
	if len(cpu) > 0 {
		fmt.Fprintf(w, ", server %.2f CPU s per million points", median(cpu))
	}
	fmt.Fprintln(w)
}

// runTLSCompare runs plaintext and TLS in turn, -runs of each, each run
// on its own span of the dataset, and prints the medians and the ratios:
// of the rate, and (with -pid) of the server's CPU per point, which the
// load of a shared machine sways less.
func runTLSCompare(ctx context.Context, f *flags, stdout, stderr io.Writer) int {
	cfg := f.o.TLS
	var rates, cpu [2][]float64 // plaintext, TLS
	for i := range 2 * f.runs {
		f.o.TLS = nil
		if i%2 == 1 {
			f.o.TLS = cfg
		}
		fmt.Fprintf(stdout, "run %d: %s\n", i, map[bool]string{false: "plaintext", true: "TLS"}[i%2 == 1])
		res, code := runOnce(ctx, f, i, stdout, stderr)
		if code != 0 {
			return code
		}
		rates[i%2] = append(rates[i%2], res.PointsPerSecond())
		if res.Server != nil && res.Points > 0 {
			cpu[i%2] = append(cpu[i%2], res.Server.CPUSeconds/float64(res.Points)*1e6)
		}
	}
	plain, tlsRate := median(rates[0]), median(rates[1])
	fmt.Fprintf(stdout, "median of %d runs each: plaintext %.0f points/s, TLS %.0f points/s, TLS/plaintext %.3f\n",
		f.runs, plain, tlsRate, tlsRate/plain)
	if len(cpu[0]) > 0 && len(cpu[1]) > 0 {
		p, t := median(cpu[0]), median(cpu[1])
		fmt.Fprintf(stdout, "server CPU s per million points: plaintext %.3f, TLS %.3f, TLS/plaintext %.3f\n", p, t, t/p)
	}
	return 0
}

func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// startProfile starts the CPU profile; the returned func ends it.
func startProfile(path string) (func(), error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		fh.Close()
	}, nil
}

// shards returns one source per connection, each with its share of the
// hosts and of -limit.
func shards(f *flags, cfg gen.Config) ([]load.Source, error) {
	n := max(f.o.Conns, 1)
	srcs := make([]load.Source, n)
	for i := range srcs {
		g, err := gen.New(cfg)
		if err != nil {
			return nil, err
		}
		g.Shard(i, n)
		limit := 0
		if f.limit > 0 {
			limit = f.limit / n
			if i < f.limit%n {
				limit++
			}
			if limit == 0 { // fewer points than connections
				return srcs[:i], nil
			}
		}
		srcs[i] = load.NewGenSource(g, f.o.Format, f.batch, limit)
	}
	return srcs, nil
}

func source(f *flags, cfg gen.Config) (load.Source, func(), error) {
	if f.file == "" {
		g, err := gen.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		return load.NewGenSource(g, f.o.Format, f.batch, f.limit), func() {}, nil
	}
	if f.o.Format != gen.FormatTelnet && f.o.Format != gen.FormatInflux {
		return nil, nil, fmt.Errorf("-file needs -proto telnet or influx (line formats)")
	}
	fh, err := os.Open(f.file)
	if err != nil {
		return nil, nil, err
	}
	return load.NewLineSource(fh, f.o.Format == gen.FormatInflux, f.batch), func() { fh.Close() }, nil
}

func report(w io.Writer, f *flags, r *load.Result) {
	fmt.Fprintf(w, "tsdload: %s to %s, %d conns, batch %d: %d points in %v\n",
		f.proto, f.o.Addr, f.o.Conns, f.batch, r.Points, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "points/s: %.0f\n", r.PointsPerSecond())
	fmt.Fprintf(w, "requests: %d ok, %d errors\n", r.Requests, r.Errors)
	for _, e := range r.ErrorSamples {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	if len(r.Latencies) > 0 {
		fmt.Fprintf(w, "latency: p50 %v, p99 %v, max %v\n",
			r.Percentile(0.5), r.Percentile(0.99), r.Latencies[len(r.Latencies)-1])
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server pid %d: %.2f CPU s (%.2f cores), peak RSS %.1f MiB, %.0f points per CPU second\n",
			f.o.PID, s.CPUSeconds, s.CPUSeconds/r.Elapsed.Seconds(), float64(s.PeakRSS)/(1<<20),
			float64(r.Points)/max(s.CPUSeconds, 0.01))
	}
}
