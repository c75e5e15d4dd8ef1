package storebench

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/storage/pebble"
)

// targets opens both sides in fresh directories.
func targets(b *testing.B) map[string]Target {
	raw, err := OpenRaw(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	db, err := pebble.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := NewTable(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { raw.Close(); tbl.Close() })
	return map[string]Target{"raw": raw, "tsd": tbl}
}

// BenchmarkPut writes one synced 1,000-cell batch per op; cells/s is the
// figure.
func BenchmarkPut(b *testing.B) {
	cells, err := Cells(gen.Config{}, 100*DefaultBatch)
	if err != nil {
		b.Fatal(err)
	}
	for name, t := range targets(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(DefaultBatch * (RowKeySize + QualifierSize + ValueSize))
			i := 0
			for b.Loop() {
				batch := cells[i*DefaultBatch : (i+1)*DefaultBatch]
				if err := t.Put(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) % 100
			}
			b.ReportMetric(float64(b.N*DefaultBatch)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}

// BenchmarkRead reads one 360-cell row per op with Get, with Scan and with
// Get into reused buffers.
func BenchmarkRead(b *testing.B) {
	for name, t := range targets(b) {
		keys, err := Preload(context.Background(), t, 200)
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range []ReadOp{OpGet, OpScan, OpGetReuse} {
			b.Run(name+"/"+op.String(), func(b *testing.B) {
				b.ReportAllocs()
				read := op.reader(t)
				i := 0
				for b.Loop() {
					if n, err := read(context.Background(), keys[i%len(keys)]); err != nil || n != RowCells {
						b.Fatalf("%d cells, %v", n, err)
					}
					i += 7
				}
			})
		}
	}
}
