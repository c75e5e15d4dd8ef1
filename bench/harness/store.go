package harness

import (
	"context"
	"os"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/storebench"
)

func storageFigures(e *Env) []Figure {
	missing := Side{Missing: "n/a (no engine: issue 2)"}
	tsd := func(m Measure) Side {
		if e.OpenStore == nil {
			return missing
		}
		return Side{Name: "tsd storage engine", Measure: m}
	}
	raw := func(m Measure) Side { return Side{Name: "raw Pebble", Measure: m} }
	return []Figure{
		{
			Name: "storage: synced puts, 1,000-cell batches, 1 writer", Unit: "cells/s",
			TSD: tsd(putRate(openTSDTarget, 1)), Peer: raw(putRate(openRawTarget, 1)),
		},
		{
			Name: "storage: synced puts, 1,000-cell batches, 4 writers", Unit: "cells/s",
			TSD: tsd(putRate(openTSDTarget, 4)), Peer: raw(putRate(openRawTarget, 4)),
		},
		{
			Name: "storage: one-row Get, 360 cells", Unit: "ns", LowerIsBetter: true,
			TSD: tsd(readLatency("tsd", openTSDTarget, storebench.OpGet)), Peer: raw(readLatency("raw", openRawTarget, storebench.OpGet)),
		},
		{
			Name: "storage: one-row Get into reused buffers, 360 cells", Unit: "ns", LowerIsBetter: true,
			TSD: tsd(readLatency("tsd", openTSDTarget, storebench.OpGetReuse)), Peer: raw(readLatency("raw", openRawTarget, storebench.OpGetReuse)),
		},
		{
			Name: "storage: one-row Scan, 360 cells", Unit: "ns", LowerIsBetter: true,
			TSD: tsd(readLatency("tsd", openTSDTarget, storebench.OpScan)), Peer: raw(readLatency("raw", openRawTarget, storebench.OpScan)),
		},
	}
}

type openTarget func(e *Env, dir string) (storebench.Target, error)

func openRawTarget(_ *Env, dir string) (storebench.Target, error) { return storebench.OpenRaw(dir) }

func openTSDTarget(e *Env, dir string) (storebench.Target, error) {
	db, err := e.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	t, err := storebench.NewTable(context.Background(), db)
	if err != nil {
		db.Close()
	}
	return t, err
}

func putCells(e *Env) ([]storebench.Cell, error) {
	return Cached(e, "put-cells", func() ([]storebench.Cell, error) {
		return storebench.Cells(gen.Config{Hosts: 100}, e.Size.PutCells)
	})
}

// putRate writes PutCells cells into a fresh store per run.
func putRate(open openTarget, writers int) Measure {
	return func(e *Env) (float64, error) {
		cells, err := putCells(e)
		if err != nil {
			return 0, err
		}
		dir, err := e.TempDir("put")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		t, err := open(e, dir)
		if err != nil {
			return 0, err
		}
		rate, err := storebench.PutRate(context.Background(), t, cells, storebench.DefaultBatch, writers)
		if cerr := t.Close(); err == nil && cerr != nil {
			return 0, cerr
		}
		return rate, err
	}
}

// readStore is a store preloaded with ReadRows rows, kept for all read runs.
type readStore struct {
	t    storebench.Target
	keys [][]byte
}

func readLatency(side string, open openTarget, op storebench.ReadOp) Measure {
	return func(e *Env) (float64, error) {
		rs, err := Cached(e, "read-"+side, func() (*readStore, error) {
			dir, err := e.TempDir("read-" + side)
			if err != nil {
				return nil, err
			}
			t, err := open(e, dir)
			if err != nil {
				return nil, err
			}
			e.OnClose(t.Close)
			keys, err := storebench.Preload(context.Background(), t, e.Size.ReadRows)
			return &readStore{t, keys}, err
		})
		if err != nil {
			return 0, err
		}
		return storebench.ReadLatency(context.Background(), rs.t, rs.keys, e.Size.Reads, op)
	}
}
