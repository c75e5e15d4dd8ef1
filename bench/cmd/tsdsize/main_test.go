package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/bench/storebench"
	"github.com/tsd-db/tsd/storage/pebble"
)

func TestPrometheusDir(t *testing.T) {
	d, _ := promtsdb.Generate(gen.Config{Hosts: 1, Span: 3 * time.Hour})
	dir := t.TempDir()
	db, err := promtsdb.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := promtsdb.Append(context.Background(), db, d, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := promtsdb.WriteBlock(db); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out, errs bytes.Buffer
	if code := run([]string{"-kind", "prometheus", dir}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "10800 points") || !strings.Contains(out.String(), "| data+index |") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestTSDDir(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := storebench.NewTable(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := storebench.Cells(gen.Config{Hosts: 2}, 2000)
	if _, err := storebench.PutRate(context.Background(), tbl, cells, 1000, 1); err != nil {
		t.Fatal(err)
	}
	tbl.Close()
	var out, errs bytes.Buffer
	if code := run([]string{"-kind", "tsd", "-points", "2000", dir}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "tsd directory") || !strings.Contains(out.String(), "data tables [tsdb]") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestBadArgs(t *testing.T) {
	for _, args := range [][]string{{}, {"-kind", "mysql", "."}, {"-kind", "pebble", "/no/such/dir"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code == 0 || !strings.Contains(errs.String(), "tsdsize:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
	}
}
