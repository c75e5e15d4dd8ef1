package pebble

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/storage"
)

// TestScanZeroAllocsPerCell asserts that stepping a scan allocates nothing in
// the steady state, with and without 0xFF codes, filters and reverse order.
func TestScanZeroAllocsPerCell(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "a", Families: []storage.FamilySpec{
		{Name: "f", MaxVersions: 2}, {Name: "t", TTL: 1 << 62},
	}})
	for r := 0; r < 40; r++ {
		row := binary.BigEndian.AppendUint32([]byte{0, 0xFF}, uint32(r)) // 0xFF takes the two-byte code
		cells := make([]storage.Cell, 0, 60)
		for q := 0; q < 30; q++ {
			qual := binary.BigEndian.AppendUint16(nil, uint16(q)) // often holds 0x00
			cells = append(cells,
				storage.Cell{Family: "f", Qualifier: qual, Timestamp: 1000, Value: []byte("12345678")},
				storage.Cell{Family: "t", Qualifier: qual, Timestamp: 2000, Value: []byte("v")})
		}
		if err := tb.Put(ctx, row, cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil { // read from sstables too, not only the memtable
		t.Fatal(err)
	}
	cases := map[string]*storage.ScanOptions{
		"plain":    nil,
		"reverse":  {Reverse: true},
		"regex":    {RowRegex: "\x00\xff.*"},
		"filtered": {ReadOptions: storage.ReadOptions{Families: []string{"t"}, QualifierPrefix: []byte{0}, MaxVersions: 1}},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			sc := tb.Scan(ctx, o)
			defer sc.Close()
			for i := 0; i < 50; i++ { // warm the buffers
				if !sc.Next() {
					t.Fatalf("scan ended early: %v", sc.Err())
				}
			}
			allocs := testing.AllocsPerRun(500, func() {
				if !sc.Next() {
					t.Fatalf("scan ended early: %v", sc.Err())
				}
				c := sc.Cell()
				_ = c.Value
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per cell, want 0", allocs)
			}
		})
	}
}
