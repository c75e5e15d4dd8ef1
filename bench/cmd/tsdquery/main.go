package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
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
	peerAddr := fs.String("peer", "", "host:port of a Prometheus peer (bench/cmd/promserve): each PromQL query also runs there, right after tsd's runs, and the table gains the ratio tsd/peer of the means")
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
	c := client(*addr, *netHTTP)
	defer c.Close()
	var peer *queryset.Client
	if *peerAddr != "" {
		peer = client(*peerAddr, *netHTTP)
		defer peer.Close()
	}
	if failed := report(stdout, c, peer, list, filter, queryset.End(*span), *n); failed {
		return 1
	}
	return 0
}

func client(addr string, netHTTP bool) *queryset.Client {
	c := &queryset.Client{Base: "http://" + addr}
	if netHTTP {
		c.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
	return c
}

// peerAPI names the peer's rows.
const peerAPI = "promql (Prometheus peer)"

// report runs the selected queries and prints one Markdown table; it returns
// whether any run failed. With a peer, each PromQL query runs on tsd and on
// the peer in turn, one run each at a time, so both see the machine in the
// same minutes, and the peer's row carries the ratio tsd/peer of the means.
func report(w io.Writer, c, peer *queryset.Client, apis []queryset.API, filter *regexp.Regexp, end time.Time, n int) bool {
	t := &table{w: w, peer: peer != nil}
	fmt.Fprintf(w, "tsdquery: %s, %d runs each, ranges ending %s\n", c.Base, n, end.Format(time.RFC3339))
	if peer != nil {
		fmt.Fprintf(w, "peer: %s (PromQL only); ratio = tsd mean / peer mean\n", peer.Base)
	}
	t.header()
	ctx := context.Background()
	// The transport floor first, measured on the same connection: what a
	// query's figure cannot go below at this minute on this machine.
	if peer != nil {
		floor, pfloor := queryset.InterleaveFloor(ctx, c, peer, n)
		t.row("floor: GET /api/version", "-", floor, nil)
		t.row("floor: GET /api/version", "Prometheus peer", pfloor, &floor)
	} else {
		t.row("floor: GET /api/version", "-", c.Floor(ctx, n), nil)
	}
	for i := range queryset.Set {
		q := &queryset.Set[i]
		if !filter.MatchString(q.Name) {
			continue
		}
		for _, api := range apis {
			if peer != nil && api == queryset.PromQL {
				s, ps := queryset.Interleave(ctx, c, peer, api, q, end, n)
				t.row(q.Name, string(api), s, nil)
				t.row(q.Name, peerAPI, ps, &s)
				continue
			}
			t.row(q.Name, string(api), c.Repeat(ctx, api, q, end, n), nil)
		}
	}
	return t.failed
}

// table prints the Markdown rows; with a peer it has a ratio column.
type table struct {
	w      io.Writer
	peer   bool
	failed bool
}

func (t *table) header() {
	if t.peer {
		fmt.Fprintln(t.w, "\n| query | api | mean | p50 | p99 | errors | tsd/peer |")
		fmt.Fprintln(t.w, "| ----- | --- | ---- | --- | --- | ------ | -------- |")
		return
	}
	fmt.Fprintln(t.w, "\n| query | api | mean | p50 | p99 | errors |")
	fmt.Fprintln(t.w, "| ----- | --- | ---- | --- | --- | ------ |")
}

// row prints s; tsd, when not nil, is tsd's figure that s (the peer's) is
// the denominator of.
func (t *table) row(name, api string, s queryset.Stats, tsd *queryset.Stats) {
	fmt.Fprintf(t.w, "| %s | %s | %s | %s | %s | %d |", name, api, ms(s.Mean), ms(s.P50), ms(s.P99), s.Errors)
	if t.peer {
		r := "-"
		if tsd != nil && tsd.Mean > 0 && s.Mean > 0 {
			r = ratio(float64(tsd.Mean) / float64(s.Mean))
		}
		fmt.Fprintf(t.w, " %s |", r)
	}
	fmt.Fprintln(t.w)
	if s.FirstError != nil {
		t.failed = true
		fmt.Fprintf(t.w, "|   | first error: %.200s | | | | |\n", s.FirstError)
	}
}

// ratio prints r with two decimals, or two significant digits below 0.01,
// so a tsd far ahead of its peer never prints as 0.00.
func ratio(r float64) string {
	if r < 0.01 {
		return strconv.FormatFloat(r, 'g', 2, 64)
	}
	return fmt.Sprintf("%.2f", r)
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
