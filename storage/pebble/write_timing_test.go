package pebble

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// benchMutations fills muts with batch i: benchSeries rows of benchPerRow
// cells, new points of the same series every batch.
func benchMutations(muts []storage.Mutation, i int) {
	for s := range muts {
		m := &muts[s]
		sec := i * benchPerRow
		m.Row = benchRow(m.Row, s, uint32(sec/3600))
		if m.Cells == nil {
			m.Cells = make([]storage.Cell, benchPerRow)
		}
		for k := range m.Cells {
			m.Cells[k] = storage.Cell{Family: "t", Qualifier: benchQualifier(sec + k), Timestamp: 1000,
				Value: binary.BigEndian.AppendUint64(nil, uint64(i))}
		}
	}
}

func newBenchMutations() []storage.Mutation {
	return make([]storage.Mutation, benchSeries)
}

// BenchmarkSyncedBatchPut writes batches of 1,000 OpenTSDB-shaped cells,
// each batch synced, through the engine (Apply) and through raw pebble with
// the same cells in one pebble.Sync batch. Compare cells/s of the two.
func BenchmarkSyncedBatchPut(b *testing.B) {
	b.Run("engine=tsd", func(b *testing.B) {
		db := openInternal(b, b.TempDir(), &Options{GCInterval: -1})
		tb := ensure(b, db, benchSpec)
		muts := newBenchMutations()
		b.SetBytes(benchBatch * benchCellSize)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			benchMutations(muts, i)
			if err := tb.Apply(context.Background(), muts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "cells/s")
	})
	b.Run("engine=raw", func(b *testing.B) {
		db := openRaw(b)
		muts := newBenchMutations()
		var key []byte
		b.SetBytes(benchBatch * benchCellSize)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			benchMutations(muts, i)
			batch := db.NewBatch()
			for s := range muts {
				for _, c := range muts[s].Cells {
					key = rawKey(key, muts[s].Row, c.Qualifier)
					_ = batch.Set(key, c.Value, nil)
				}
			}
			if err := batch.Commit(pebble.Sync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
		b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "cells/s")
	})
}

// BenchmarkSyncedBatchPutParallel is BenchmarkSyncedBatchPut with four
// writers per CPU, showing that concurrent synced batches share fsyncs.
func BenchmarkSyncedBatchPutParallel(b *testing.B) {
	b.Run("engine=tsd", func(b *testing.B) {
		db := openInternal(b, b.TempDir(), &Options{GCInterval: -1})
		tb := ensure(b, db, benchSpec)
		var seq atomic.Int64
		b.SetBytes(benchBatch * benchCellSize)
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			muts := newBenchMutations()
			for pb.Next() {
				benchMutations(muts, int(seq.Add(1)))
				if err := tb.Apply(context.Background(), muts); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "cells/s")
	})
	b.Run("engine=raw", func(b *testing.B) {
		db := openRaw(b)
		var seq atomic.Int64
		b.SetBytes(benchBatch * benchCellSize)
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			muts := newBenchMutations()
			var key []byte
			for pb.Next() {
				benchMutations(muts, int(seq.Add(1)))
				batch := db.NewBatch()
				for s := range muts {
					for _, c := range muts[s].Cells {
						key = rawKey(key, muts[s].Row, c.Qualifier)
						_ = batch.Set(key, c.Value, nil)
					}
				}
				if err := batch.Commit(pebble.Sync); err != nil {
					b.Error(err)
					return
				}
				batch.Close()
			}
		})
		b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "cells/s")
	})
}

// BenchmarkSyncedBatchPutPaired alternates one engine batch and one raw
// pebble batch in the same loop (taking turns at going first), so both see
// the same disk and neighbours; on a shared machine fsync latency swings more
// between runs than the two differ. It reports each side's time per batch
// and tsd/raw-rate, the engine's throughput over raw pebble's (target >=
// 0.90).
func BenchmarkSyncedBatchPutPaired(b *testing.B) {
	db := openInternal(b, b.TempDir(), &Options{GCInterval: -1})
	tb := ensure(b, db, benchSpec)
	raw := openRaw(b)
	tsdMuts, rawMuts := newBenchMutations(), newBenchMutations()
	var key []byte
	b.SetBytes(2 * benchBatch * benchCellSize)
	tsd, rawT := pairedLoop(b, 1, func(i int) {
		benchMutations(tsdMuts, i)
		if err := tb.Apply(context.Background(), tsdMuts); err != nil {
			b.Fatal(err)
		}
	}, func(i int) {
		benchMutations(rawMuts, i)
		batch := raw.NewBatch()
		for s := range rawMuts {
			for _, c := range rawMuts[s].Cells {
				key = rawKey(key, rawMuts[s].Row, c.Qualifier)
				_ = batch.Set(key, c.Value, nil)
			}
		}
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	})
	b.ReportMetric(float64(rawT)/float64(tsd), "tsd/raw-rate")
}
