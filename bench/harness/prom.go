package harness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/promtsdb"
)

// datasetConfig is the dataset of the append, size and query figures.
func (e *Env) datasetConfig(vm gen.ValueMode) gen.Config {
	return gen.Config{Hosts: e.Size.Hosts, Span: e.Size.Span, Values: vm}
}

func promData(e *Env, vm gen.ValueMode) (*promtsdb.Data, error) {
	return Cached(e, "prom-data-"+vm.String(), func() (*promtsdb.Data, error) {
		return promtsdb.Generate(e.datasetConfig(vm))
	})
}

// promLoaded is a Prometheus DB holding the whole dataset in one block.
type promLoaded struct {
	data  *promtsdb.Data
	db    *tsdb.DB
	block promtsdb.BlockSize
	eng   *promql.Engine
}

func loadProm(e *Env, vm gen.ValueMode) (*promLoaded, error) {
	return Cached(e, "prom-loaded-"+vm.String(), func() (*promLoaded, error) {
		d, err := promData(e, vm)
		if err != nil {
			return nil, err
		}
		dir, err := e.TempDir("prom-" + vm.String())
		if err != nil {
			return nil, err
		}
		db, err := promtsdb.Open(dir)
		if err != nil {
			return nil, err
		}
		e.OnClose(db.Close)
		if _, err := promtsdb.Append(context.Background(), db, d, promtsdb.DefaultCommitEvery); err != nil {
			return nil, err
		}
		bdir, err := promtsdb.WriteBlock(db)
		if err != nil {
			return nil, err
		}
		size, err := promtsdb.MeasureBlock(db, bdir)
		if err != nil {
			return nil, err
		}
		e.Logf("prometheus %s block: %+v", vm, size)
		return &promLoaded{data: d, db: db, block: size, eng: promtsdb.NewEngine()}, nil
	})
}

// promAppendRate appends the int dataset to a fresh Prometheus DB.
func promAppendRate(e *Env) (float64, error) {
	d, err := promData(e, gen.ValuesInt)
	if err != nil {
		return 0, err
	}
	dir, err := e.TempDir("prom-append")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	db, err := promtsdb.Open(dir)
	if err != nil {
		return 0, err
	}
	el, err := e.Time(func() error {
		_, err := promtsdb.Append(context.Background(), db, d, promtsdb.DefaultCommitEvery)
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return rate(d.NumSamples(), el)
}

func promChunkBytes(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		l, err := loadProm(e, vm)
		if err != nil {
			return 0, err
		}
		return float64(l.block.Chunks) / float64(l.block.Samples), nil
	}
}

func promBlockBytes(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		l, err := loadProm(e, vm)
		if err != nil {
			return 0, err
		}
		return float64(l.block.Chunks+l.block.Index) / float64(l.block.Samples), nil
	}
}

var promQueries = []promtsdb.Query{promtsdb.MaxPerMinuteOneHost, promtsdb.HourlyAvgByHost}

// promQuery times query i on the int dataset: the median of QueryRepeats
// executions, in milliseconds.
func promQuery(i int) Measure {
	return func(e *Env) (float64, error) {
		l, err := loadProm(e, gen.ValuesInt)
		if err != nil {
			return 0, err
		}
		ds := make([]float64, 0, e.Size.QueryRepeats)
		for r := 0; r < max(e.Size.QueryRepeats, 1); r++ {
			var n int
			d, err := e.Time(func() (err error) {
				_, n, err = promtsdb.Run(context.Background(), l.eng, l.db, promQueries[i], l.data.MaxTime())
				return err
			})
			if err != nil {
				return 0, err
			}
			if n == 0 {
				return 0, fmt.Errorf("%s: empty result", promQueries[i].Expr)
			}
			ds = append(ds, float64(d)/float64(time.Millisecond))
		}
		slices.Sort(ds)
		return Median(ds), nil
	}
}
