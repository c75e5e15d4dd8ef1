package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	cfg    gen.Config
	values string
	dir    string
	addr   string
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("promserve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&f.cfg.Hosts, "hosts", 100, "dataset hosts (as tsdload's -hosts)")
	fs.DurationVar(&f.cfg.Span, "span", 24*time.Hour, "dataset span (as tsdload's -span)")
	fs.Uint64Var(&f.cfg.Seed, "seed", 1, "dataset seed (as tsdload's -seed)")
	fs.StringVar(&f.values, "values", "int", "value mode: int or float (as tsdload's -values)")
	fs.StringVar(&f.dir, "dir", "", "Prometheus tsdb directory (default: a temporary directory, removed at exit)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:9090", "listen host:port")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	f.cfg.Values, err = gen.ParseValueMode(f.values)
	return f, err
}

// run loads the dataset, serves until ctx is done and returns the exit
// code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "promserve: %v\n", err)
		return 2
	}
	if err := serve(ctx, f, stdout); err != nil {
		fmt.Fprintf(stderr, "promserve: %v\n", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, f *flags, stdout io.Writer) error {
	dir := f.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "promserve-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	db, d, err := load(ctx, f.cfg, dir)
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	api := newAPI(db)
	defer api.close()
	srv := &http.Server{Handler: api.mux(), ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "promserve: %d samples of %d series in a block, serving on %s\n",
		d.NumSamples(), len(d.Labels), ln.Addr())
	select {
	case err = <-done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	return err
}

// load appends cfg's dataset to a Prometheus tsdb in dir and compacts the
// head into one block, as bench/harness's loadProm does.
func load(ctx context.Context, cfg gen.Config, dir string) (*tsdb.DB, *promtsdb.Data, error) {
	d, err := promtsdb.Generate(cfg)
	if err != nil {
		return nil, nil, err
	}
	db, err := promtsdb.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	if _, err = promtsdb.Append(ctx, db, d, promtsdb.DefaultCommitEvery); err == nil {
		_, err = promtsdb.WriteBlock(db)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, d, nil
}
