package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/tsd-db/tsd/bench/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	smoke := fs.Bool("smoke", false, "tiny size for CI: 2 hosts x 12 h, 1 run")
	runs := fs.Int("runs", 0, "runs per figure (default 5; 1 with -smoke)")
	hosts := fs.Int("hosts", 0, "dataset hosts (default 100)")
	span := fs.Duration("span", 0, "dataset span (default 24h; must be >= 12h for the PromQL figures)")
	dir := fs.String("dir", "", "parent of the scratch directory (default: system temp dir)")
	only := fs.String("only", "", "regexp: run only figures whose name matches")
	verbose := fs.Bool("v", false, "log every run to stderr")
	rowCache := fs.Int64("rowcache", 0, "query readers' decoded-row cache in bytes: 0 the default (256 MiB), -1 off (every query decodes)")
	clock := fs.String("clock", "cpu", "timer of the CPU-bound rows: cpu (process CPU time, robust on shared machines) or wall")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (datasets, both sides of every figure) to this file")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the whole run to this file at its end")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "tsdbench: -cpuprofile: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "tsdbench: -cpuprofile: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		defer writeAllocs(*memProfile, stderr)
	}
	size := harness.Default
	if *smoke {
		size = harness.Smoke
	}
	size.Runs = pick(*runs, size.Runs)
	size.Hosts = pick(*hosts, size.Hosts)
	size.Span = pick(*span, size.Span)
	filter, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: -only: %v\n", err)
		return 2
	}
	clk, err := harness.ParseClock(*clock)
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: -clock: %v\n", err)
		return 2
	}
	if err := bench(size, clk, *rowCache, *dir, filter, *verbose, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tsdbench: %v\n", err)
		return 1
	}
	return 0
}

func pick[T comparable](flagValue, def T) T {
	var zero T
	if flagValue != zero {
		return flagValue
	}
	return def
}

func bench(size harness.Size, clk harness.Clock, rowCache int64, dir string, filter *regexp.Regexp, verbose bool, stdout, stderr io.Writer) error {
	e, err := harness.NewEnv(size, dir)
	if err != nil {
		return err
	}
	defer e.Close()
	e.Clock = clk
	e.RowCacheBytes = rowCache
	if verbose {
		e.Log = stderr
	}
	e.OpenStore = openStore
	var figs []harness.Figure
	for _, f := range harness.Figures(e) {
		if filter.MatchString(f.Name) {
			figs = append(figs, f)
		}
	}
	start, load := time.Now(), harness.LoadAverage()
	rs := harness.Run(e, figs)
	fmt.Fprintf(stdout, "tsdbench, size %s: devops %d hosts x %v, median of %d runs, %s, load average %s at start, %s at end\n",
		size.Name, size.Hosts, size.Span, size.Runs, time.Since(start).Round(time.Second), load, harness.LoadAverage())
	fmt.Fprintf(stdout, "machine: %s\n", harness.Machine())
	fmt.Fprintf(stdout, "clock: %s time for the CPU-bound rows (rates per %s second), wall time for the storage rows\n\n", clk, clk)
	if err := harness.WriteTable(stdout, rs); err != nil {
		return err
	}
	return e.Close()
}

// writeAllocs writes the allocation profile (every allocation since the
// start, sampled) to path.
func writeAllocs(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsdbench: -memprofile: %v\n", err)
	}
}
