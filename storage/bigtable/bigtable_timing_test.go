package bigtable

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

// The emulator is in-memory and single-process: these figures show the
// cost of the client path (encoding, gRPC, chunking), not Bigtable's speed.

const (
	benchRowsPerBatch = 500
	benchCellsPerRow  = 8
)

// benchMutations builds batch number n of OpenTSDB-shaped rows: 13-byte
// keys, 2-byte qualifiers, 8-byte values.
func benchMutations(n int, cells []storage.Cell) ([]storage.Mutation, int) {
	muts := make([]storage.Mutation, benchRowsPerBatch)
	size := 0
	for i := range muts {
		key := make([]byte, 13)
		binary.BigEndian.PutUint64(key[5:], uint64(n*benchRowsPerBatch+i))
		muts[i] = storage.Mutation{Row: key, Cells: cells}
		size += len(key) + benchCellsPerRow*(2+8)
	}
	return muts, size
}

func benchCells() []storage.Cell {
	cells := make([]storage.Cell, benchCellsPerRow)
	for i := range cells {
		cells[i] = storage.Cell{Family: "t", Qualifier: []byte{byte(i), 0x07}, Timestamp: ms(1_700_000_000_000), Value: make([]byte, 8)}
	}
	return cells
}

func BenchmarkApplyBatch(b *testing.B) {
	db := openEmulated(b)
	tbl := mustTable(b, db, oneFamily("tsdb", "t", 0, 0))
	cells := benchCells()
	ctx := context.Background()
	_, size := benchMutations(0, cells)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		muts, _ := benchMutations(n, cells)
		n++
		if err := tbl.Apply(ctx, muts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchRowsPerBatch*benchCellsPerRow)/b.Elapsed().Seconds(), "cells/s")
}

func BenchmarkScan(b *testing.B) {
	db := openEmulated(b)
	tbl := mustTable(b, db, oneFamily("tsdb", "t", 0, 0))
	cells := benchCells()
	ctx := context.Background()
	const batches = 10
	size := 0
	for n := 0; n < batches; n++ {
		muts, sz := benchMutations(n, cells)
		size += sz
		if err := tbl.Apply(ctx, muts); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var sink int
	for b.Loop() {
		s := tbl.Scan(ctx, nil)
		for s.Next() {
			for _, c := range s.Row().Cells {
				sink += len(c.Value)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if want := b.N * batches * benchRowsPerBatch * benchCellsPerRow * 8; sink != want {
		b.Fatalf("scanned %d value bytes, want %d", sink, want)
	}
	b.ReportMetric(float64(b.N*batches*benchRowsPerBatch*benchCellsPerRow)/b.Elapsed().Seconds(), "cells/s")
}
