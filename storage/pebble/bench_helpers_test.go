package pebble

import (
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/tsd-db/tsd/storage"
)

// The benchmarks use OpenTSDB-shaped cells: 26-byte row keys (salt 1B,
// metric 3B, base hour 4B, three tag pairs of 3B+3B), 2-byte qualifiers and
// 8-byte values, in family "t".
const (
	benchRowLen   = 26
	benchSeries   = 100 // rows written per batch
	benchPerRow   = 10  // cells per row per batch
	benchBatch    = benchSeries * benchPerRow
	benchCellSize = benchRowLen + 2 + 8
)

var benchSpec = storage.TableSpec{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t"}}}

// benchRow is the row key of a series for a base hour.
func benchRow(dst []byte, series int, hour uint32) []byte {
	dst = append(dst[:0], byte(series%20), 0, 0, 1)
	dst = binary.BigEndian.AppendUint32(dst, hour*3600)
	for tag := 0; tag < 3; tag++ {
		dst = append(dst, 0, 0, byte(tag+1), 0, byte(series>>8), byte(series))
	}
	return dst
}

// benchQualifier is OpenTSDB's 2-byte qualifier: seconds << 4 | flags.
func benchQualifier(sec int) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(sec%3600)<<4|7)
}

// rawOptions configures raw pebble as the engine configures its own store
// (cache, memtable, bloom filters, compression, format) but with pebble's
// default bytewise comparer and no key encoding.
func rawOptions() *pebble.Options {
	o := (&Options{}).EnsureDefaults()
	po := &pebble.Options{
		CacheSize: o.CacheSize, MemTableSize: o.MemTableSize,
		FormatMajorVersion: pebble.FormatNewest, Logger: slogAdapter{l: o.Logger},
	}
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionBalanced })
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	po.EnsureDefaults()
	return po
}

func openRaw(b testing.TB) *pebble.DB {
	db, err := pebble.Open(b.TempDir(), rawOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// rawKey is the raw peer's key for a cell: row, family byte, qualifier.
func rawKey(dst, row, qual []byte) []byte {
	dst = append(append(dst[:0], row...), 't')
	return append(dst, qual...)
}
