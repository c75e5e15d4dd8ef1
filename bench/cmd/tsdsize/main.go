package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/tsd-db/tsd/bench/dirsize"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdsize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("kind", "tsd", "directory layout: tsd, prometheus or pebble")
	points := fs.Uint64("points", 0, "points stored (prometheus: read from meta.json when 0)")
	tables := fs.String("data-tables", strings.Join(dirsize.DefaultDataTables, ","), "tsd: comma-separated tables counted as data")
	compact := fs.Bool("compact", true, "tsd: compact the store before measuring")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "tsdsize: want exactly one directory argument")
		return 2
	}
	r, err := measure(*kind, fs.Arg(0), *points, strings.Split(*tables, ","), *compact)
	if err == nil {
		err = r.Write(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsdsize: %v\n", err)
		return 1
	}
	return 0
}

func measure(kind, dir string, points uint64, tables []string, compact bool) (dirsize.Report, error) {
	if _, err := os.Stat(dir); err != nil {
		return dirsize.Report{}, err
	}
	switch kind {
	case "prometheus":
		r, err := dirsize.Prometheus(dir)
		if points != 0 {
			r.Points = points
		}
		return r, err
	case "pebble":
		r, err := dirsize.Pebble(dir)
		r.Points = points
		return r, err
	case "tsd":
		return measureTSD(dir, points, tables, compact)
	}
	return dirsize.Report{}, fmt.Errorf("unknown -kind %q (want tsd, prometheus or pebble)", kind)
}

func measureTSD(dir string, points uint64, tables []string, compact bool) (r dirsize.Report, err error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return r, fmt.Errorf("open tsd store (is the daemon stopped?): %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	var s storage.DB = db
	if !compact {
		s = noCompact{db}
	}
	return dirsize.TSD(context.Background(), s, dir, tables, points)
}

// noCompact hides the engine's Compact method.
type noCompact struct{ storage.DB }
