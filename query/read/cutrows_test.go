package read_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/storagetest"
	"github.com/tsd-db/tsd/uid/index"
)

// TestReadRowsCutIntoBatches reads stored rows of several cells that every
// scan delivers a cell at a time, as a row larger than the scan's byte
// bound arrives, with Read, Visit, Fetch and the Iterator under both
// plans: the scan plans gather a row's batches before decoding it, so
// every answer still matches the model.
func TestReadRowsCutIntoBatches(t *testing.T) {
	s := openStack(t)
	m := loadSplit(t, s)
	all := s.selection(t, "m")
	addSingleCells(t, s, m, all)
	opts := read.Options{Data: storagetest.CutRows(s.data, 1), Layout: s.layout, Head: s.head, Logger: quiet}
	r, err := read.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, rg := range modelRanges {
		readEveryWay(t, s, r, all, m, rg)
		for _, plan := range []read.Plan{read.PlanSeries, read.PlanScan} {
			f, err := r.Fetch(context.Background(), read.Selection{Series: all, Start: rg[0], End: rg[1], Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			var reuse *read.SeriesIterator
			for i, x := range all {
				reuse = f.Iterator(context.Background(), i, reuse)
				walkModel(t, fmt.Sprintf("fetch/%s/%d-%d", plan, rg[0]-t0, rg[1]-t0), rng, reuse, m.want(hostOf(t, s, x), rg[0], rg[1]), rg)
			}
			f.Release()
		}
	}
	if st := r.Stats(); st.Scans == 0 || st.PlansScan == 0 {
		t.Fatalf("stats %+v: the scan plan never ran", st)
	}
}

// addSingleCells adds to every stored row (hours 0 to 2) of the series two
// single-point cells in OpenTSDB's format, at times the model holds no
// point at, so each row holds three cells; the model learns the points.
func addSingleCells(t *testing.T, s *stack, m model, sel []index.Series) {
	t.Helper()
	ctx := context.Background()
	for i, x := range sel {
		h := hostOf(t, s, x)
		for hour := range int64(3) {
			base := t0 + hour*hourMs
			row, err := s.layout.AppendRowKeyFromTSUID(nil, []byte(x.TSUID), base)
			if err != nil {
				t.Fatal(err)
			}
			var cells []storage.Cell
			for off := int64(1000 + i); len(cells) < 2; off += 7 {
				ts := base + off*1000
				if _, taken := m[h][ts]; taken {
					continue
				}
				v := int64(len(cells)*100 + i)
				cells = append(cells, storage.Cell{Family: "t", Qualifier: binary.BigEndian.AppendUint16(nil, uint16(off<<4)), Value: []byte{byte(v)}})
				m[h][ts] = series.IntPoint(ts, v)
			}
			if err := s.data.Put(ctx, row, cells); err != nil {
				t.Fatal(err)
			}
		}
	}
}
