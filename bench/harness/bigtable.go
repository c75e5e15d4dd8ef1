package harness

import (
	"github.com/tsd-db/tsd/uid/tsmeta"

	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
	"github.com/tsd-db/tsd/bench/queryset"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/bigtable"
)

// bigtableFigures put tsd on the Bigtable engine, over an in-process
// emulator, beside tsd on Pebble in the same run (issue 3's figures). The
// emulator is in-memory and single-process: the rows prove the path and
// its overhead, not Bigtable's speed.
func bigtableFigures(e *Env) []Figure {
	pebbleSide := func(m Measure) Side {
		if e.OpenStore == nil {
			return Side{Missing: "n/a (no engine)"}
		}
		return Side{Name: "tsd on Pebble", Measure: m}
	}
	pebbleSideNamed := func(name string, m Measure) Side {
		if e.OpenStore == nil {
			return Side{Missing: "n/a (no engine)"}
		}
		return Side{Name: name, Measure: m}
	}
	bt := func(m Measure) Side {
		return Side{Name: "tsd on the Bigtable emulator (bttest, in process)", Measure: m}
	}
	return []Figure{
		{
			Name: "Bigtable emulator: ingest devops int, head + WAL + flush to the store", Unit: "points/s",
			TSD: bt(engineIngestRate("bt", openEmulatorStore)), Peer: pebbleSide(engineIngestRate("pebble", e.OpenStore)),
		},
		{
			Name: "TSMeta counting (enable_tsuid_incrementing): ingest devops int, head + WAL + flush to the store", Unit: "points/s",
			TSD:  pebbleSideNamed("tsd on Pebble, counting", trackedIngestRate("pebble-counting", e.OpenStore, tsmeta.TrackCount)),
			Peer: pebbleSide(trackedIngestRate("pebble-untracked", e.OpenStore, tsmeta.TrackOff)),
		},
		{
			Name: "Bigtable emulator: scan rate of groupby-12h forced to scan the metric", Unit: "points/s",
			TSD: bt(engineScanRate("bt", openEmulatorStore)), Peer: pebbleSide(engineScanRate("pebble", e.OpenStore)),
		},
	}
}

// emulatorStore is the Bigtable engine on its own emulator, which Close
// stops after the engine.
type emulatorStore struct {
	*bigtable.DB
	srv *bttest.Server
}

// Close closes the engine, then the emulator.
func (s *emulatorStore) Close() error {
	err := s.DB.Close()
	s.srv.Close()
	return err
}

// openEmulatorStore starts an in-process emulator with Bigtable's message
// limits (256 MiB) and opens the engine on it; dir is unused (the
// emulator holds its data in memory).
func openEmulatorStore(string) (storage.DB, error) {
	srv, err := bttest.NewServer("127.0.0.1:0", grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20))
	if err != nil {
		return nil, err
	}
	db, err := bigtable.Open(context.Background(), bigtable.Options{Project: "bench", Instance: "bench", EmulatorHost: srv.Addr})
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &emulatorStore{DB: db, srv: srv}, nil
}

// engineIngestRate loads the int devops dataset into a fresh store per run
// through tsd's write path (series created in the head and the series
// index, head + log, then every row flushed to the store, the compaction
// queue drained and the index flushed) and returns points per second of
// the whole.
func engineIngestRate(name string, open storeOpener) Measure {
	return trackedIngestRate(name, open, tsmeta.TrackOff)
}

// trackedIngestRate is engineIngestRate with the flusher's TSMeta
// tracking in mode.
func trackedIngestRate(name string, open storeOpener, mode tsmeta.Mode) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		w, err := openTSDWriterOn(e, open, d, "tsd-ingest-"+name, head.HeadOptions{MaxMemory: -1})
		if err != nil {
			return 0, err
		}
		w.track = mode
		el, err := e.Time(func() error {
			if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
				return err
			}
			return w.flushAll(d)
		})
		if cerr := w.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
		return rate(d.NumSamples(), el)
	}
}

// engineScanRate runs bench/queryset's groupby-12h through the OpenTSDB
// query engine with the read plan forced to scan the metric's rows, on the
// int dataset loaded once per engine and flushed to its store, and
// returns the points of the metric in the query's range per second of the
// median run (parse, execute, JSON written).
func engineScanRate(name string, open storeOpener) Measure {
	return func(e *Env) (float64, error) {
		d, err := promData(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		l, err := loadEngine(e, name, open, d)
		if err != nil {
			return 0, err
		}
		q, err := queryset.ByName("groupby-12h")
		if err != nil {
			return 0, err
		}
		end := time.UnixMilli(d.MaxTime())
		pts := pointsInRange(d, q.OpenTSDB[0].Metric, end.Add(-q.Range).UnixMilli(), end.UnixMilli())
		if pts == 0 {
			return 0, fmt.Errorf("groupby-12h: no points of %s in range", q.OpenTSDB[0].Metric)
		}
		body := q.OpenTSDBBody(end)
		ms, err := medianMs(e, func() error { return runOpenTSDB(l.eng, body, e.Size.Hosts) })
		if err != nil {
			return 0, err
		}
		return rate(pts, time.Duration(ms*float64(time.Millisecond)))
	}
}

// engineLoaded is the int dataset flushed to one engine's store, with the
// OpenTSDB query engine over it reading by scan.
type engineLoaded struct {
	w   *tsdWriter
	eng *opentsdb.Engine
}

func loadEngine(e *Env, name string, open storeOpener, d *promtsdb.Data) (*engineLoaded, error) {
	return Cached(e, "tsd-engine-loaded-"+name, func() (*engineLoaded, error) {
		w, err := openTSDWriterOn(e, open, d, "tsd-scan-"+name, head.HeadOptions{MaxMemory: -1})
		if err != nil {
			return nil, err
		}
		e.OnClose(w.close)
		if err := w.appendAll(d, promtsdb.DefaultCommitEvery); err != nil {
			return nil, err
		}
		if err := w.flushAll(d); err != nil {
			return nil, err
		}
		r, err := read.New(&read.Options{Data: w.data, Layout: rowkey.DefaultLayout(), Head: w.h, Plan: read.PlanScan})
		if err != nil {
			return nil, err
		}
		eng, err := opentsdb.New(&opentsdb.Options{Reader: r, UIDs: w.u, Index: w.ix})
		if err != nil {
			return nil, err
		}
		return &engineLoaded{w: w, eng: eng}, nil
	})
}

// pointsInRange counts d's points of metric with a timestamp in
// [start, end].
func pointsInRange(d *promtsdb.Data, metric string, start, end int64) int {
	var series int
	for _, ls := range d.Labels {
		if ls.Get("__name__") == metric {
			series++
		}
	}
	var steps int
	for t := d.Start; t <= d.MaxTime(); t += d.Step {
		if t >= start && t <= end {
			steps++
		}
	}
	return series * steps
}
