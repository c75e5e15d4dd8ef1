package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/bench/saltspread"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage/pebble"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// flags are the command line.
type flags struct {
	series, buckets, width int
	seed                   uint64
	mem                    bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdsalt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f flags
	fs.IntVar(&f.series, "series", saltspread.DefaultSeries, "number of devops series (10 per host)")
	fs.IntVar(&f.buckets, "buckets", salt.DefaultBuckets, "salt buckets")
	fs.IntVar(&f.width, "width", salt.DefaultWidth, "salt width in bytes (0..8)")
	fs.Uint64Var(&f.seed, "seed", 1, "dataset seed")
	fs.BoolVar(&f.mem, "mem", true, "keep the UID table in memory (false: a temp dir on disk)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "tsdsalt: no arguments expected")
		return 2
	}
	if err := measure(f, stdout); err != nil {
		fmt.Fprintf(stderr, "tsdsalt: %v\n", err)
		return 1
	}
	return 0
}

func measure(f flags, w io.Writer) error {
	s, err := salt.New(f.width, f.buckets)
	if err != nil {
		return err
	}
	db, cleanup, err := openStore(f.mem)
	if err != nil {
		return err
	}
	defer cleanup()
	ts, err := saltspread.Resolve(context.Background(), db, saltspread.Config{Series: f.series, Seed: f.seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "devops series: %d (%d hosts x %d metrics, seed %d), UIDs assigned in first-seen order\n",
		len(ts.Keys), ts.Hosts, ts.Metrics, f.seed)
	r, err := saltspread.Spread(ts, s)
	if err != nil {
		return err
	}
	if err := r.WriteTable(w); err != nil {
		return err
	}
	none, err := saltspread.Spread(ts, salt.None())
	if err != nil {
		return err
	}
	return none.WriteSummary(w)
}

// openStore opens an empty pebble store in memory or in a temp dir, and
// returns what closes and removes it.
func openStore(mem bool) (*pebble.DB, func(), error) {
	opts := &pebble.Options{Logger: slog.New(slog.DiscardHandler), GCInterval: -1}
	dir := "/tsdsalt"
	if mem {
		opts.FS = vfs.NewMem()
	} else {
		d, err := os.MkdirTemp("", "tsdsalt-")
		if err != nil {
			return nil, nil, err
		}
		dir = d
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		if !mem {
			os.RemoveAll(dir)
		}
		return nil, nil, err
	}
	return db, func() {
		db.Close()
		if !mem {
			os.RemoveAll(dir)
		}
	}, nil
}
