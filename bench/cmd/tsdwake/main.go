package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/bench/procstat"
	"github.com/tsd-db/tsd/bench/queryset"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tsdwake:", err)
		os.Exit(1)
	}
}

func run() error {
	addrs := flag.String("addrs", "127.0.0.1:4242", "comma-separated host:port of the servers, taking turns in this order")
	pids := flag.String("pids", "", "comma-separated pids of the servers' processes, in -addrs order (0 or empty: no CPU)")
	cycles := flag.Int("cycles", 40, "turns of each server")
	per := flag.Int("per", 5, "runs in a turn")
	gap := flag.Duration("gap", 50*time.Millisecond, "pause before each turn (tsdvm's quiet wait is at least 50 ms)")
	name := flag.String("q", "single-1h", "query of the query set (PromQL)")
	span := flag.Duration("span", 24*time.Hour, "span of the loaded dataset; the query ends at its last point")
	flag.Parse()
	q, err := queryset.ByName(*name)
	if err != nil {
		return err
	}
	as := strings.Split(*addrs, ",")
	ps, err := parsePids(*pids, len(as))
	if err != nil {
		return err
	}
	end := queryset.End(*span)
	ctx := context.Background()
	ss := make([]*server, len(as))
	for i, a := range as {
		ss[i] = &server{addr: a, pid: ps[i], c: &queryset.Client{Base: "http://" + a}, pos: make([][]time.Duration, *per)}
		defer ss[i].c.Close()
		if _, err := ss[i].c.Do(ctx, queryset.PromQL, q, end); err != nil { // the connection's set-up, off the clock
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	for range *cycles {
		for _, s := range ss {
			time.Sleep(*gap)
			if err := s.turn(ctx, q, end); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%s, %d turns of %d runs after %v pauses\n", *name, *cycles, *per, *gap)
	for _, s := range ss {
		s.print()
	}
	return nil
}

// server is one server's connection and what its runs took.
type server struct {
	addr string
	pid  int
	c    *queryset.Client
	pos  [][]time.Duration // by position in the turn
	cpu  time.Duration     // the process's CPU over every run
}

// turn makes one turn of runs, timing each and the process's CPU.
func (s *server) turn(ctx context.Context, q *queryset.Query, end time.Time) error {
	c0 := s.cpuNow()
	for p := range s.pos {
		d, err := s.c.Do(ctx, queryset.PromQL, q, end)
		if err != nil {
			return fmt.Errorf("%s: %w", s.addr, err)
		}
		s.pos[p] = append(s.pos[p], d)
	}
	s.cpu += s.cpuNow() - c0
	return nil
}

func (s *server) cpuNow() time.Duration {
	if s.pid <= 0 {
		return 0
	}
	c, err := procstat.CPUTime(s.pid)
	if err != nil {
		return 0
	}
	return c
}

func (s *server) print() {
	var all []time.Duration
	var b strings.Builder
	for p, ds := range s.pos {
		all = append(all, ds...)
		st := queryset.Summarize(ds)
		fmt.Fprintf(&b, " run %d: mean %v, median %v;", p+1, us(st.Mean), us(st.P50))
	}
	st := queryset.Summarize(all)
	fmt.Printf("%s:%s\n  all: mean %v, median %v", s.addr, b.String(), us(st.Mean), us(st.P50))
	if s.pid > 0 && len(all) > 0 {
		fmt.Printf(", server CPU %v a run", us(s.cpu/time.Duration(len(all))))
	}
	fmt.Println()
}

// us rounds d to the microsecond for printing.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

func parsePids(s string, n int) ([]int, error) {
	out := make([]int, n)
	if s == "" {
		return out, nil
	}
	f := strings.Split(s, ",")
	if len(f) != n {
		return nil, fmt.Errorf("-pids names %d processes for %d servers", len(f), n)
	}
	for i, x := range f {
		p, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return nil, fmt.Errorf("-pids: %w", err)
		}
		out[i] = p
	}
	return out, nil
}
