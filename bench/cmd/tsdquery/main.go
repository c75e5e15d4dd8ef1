package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/tsd-db/tsd/bench/queryset"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdquery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:4242", "server host:port")
	apis := fs.String("api", "opentsdb,promql", "comma-separated APIs: opentsdb, promql")
	n := fs.Int("n", 20, "runs per query and API")
	span := fs.Duration("span", 24*time.Hour, "span of the loaded dataset; queries end at its last point")
	only := fs.String("only", "", "regexp: run only queries whose name matches")
	netHTTP := fs.Bool("nethttp", false, "send through net/http (transport goroutines, gzip) instead of one caller-driven keep-alive connection")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	filter, err := regexp.Compile(*only)
	if err != nil || *n < 1 {
		fmt.Fprintf(stderr, "tsdquery: bad -only or -n: %v\n", err)
		return 2
	}
	var list []queryset.API
	for _, a := range strings.Split(*apis, ",") {
		if a != string(queryset.OpenTSDB) && a != string(queryset.PromQL) {
			fmt.Fprintf(stderr, "tsdquery: unknown api %q\n", a)
			return 2
		}
		list = append(list, queryset.API(a))
	}
	c := &queryset.Client{Base: "http://" + *addr}
	if *netHTTP {
		c.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
	defer c.Close()
	if failed := report(stdout, c, list, filter, queryset.End(*span), *n); failed {
		return 1
	}
	return 0
}

// report runs the selected queries and prints one Markdown table; it returns
// whether any run failed.
func report(w io.Writer, c *queryset.Client, apis []queryset.API, filter *regexp.Regexp, end time.Time, n int) bool {
	fmt.Fprintf(w, "tsdquery: %s, %d runs each, ranges ending %s\n\n", c.Base, n, end.Format(time.RFC3339))
	fmt.Fprintln(w, "| query | api | mean | p50 | p99 | errors |")
	fmt.Fprintln(w, "| ----- | --- | ---- | --- | --- | ------ |")
	failed := false
	row := func(name, api string, s queryset.Stats) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", name, api, ms(s.Mean), ms(s.P50), ms(s.P99), s.Errors)
		if s.FirstError != nil {
			failed = true
			fmt.Fprintf(w, "|   | first error: %.200s | | | | |\n", s.FirstError)
		}
	}
	// The transport floor first, measured on the same connection: what a
	// query's figure cannot go below at this minute on this machine.
	row("floor: GET /api/version", "-", c.Floor(context.Background(), n))
	for i := range queryset.Set {
		q := &queryset.Set[i]
		if !filter.MatchString(q.Name) {
			continue
		}
		for _, api := range apis {
			row(q.Name, string(api), c.Repeat(context.Background(), api, q, end, n))
		}
	}
	return failed
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
