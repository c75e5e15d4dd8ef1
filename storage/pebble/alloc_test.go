package pebble

import (
	"context"
	"encoding/binary"
	"errors"
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

// TestGetAppendZeroAllocs asserts that GetAppend into reused buffers
// allocates nothing in the steady state, for a wide OpenTSDB-shaped row
// read through the families' version limit, a filtered read, rows of other
// sizes in turn and an absent row; and that Get still returns exactly
// sized memory (two allocations: the cells and their bytes).
func TestGetAppendZeroAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "a", Families: []storage.FamilySpec{
		{Name: "t", MaxVersions: 1}, {Name: "f"},
	}})
	var rows [][]byte
	for r, n := range []int{360, 1, 40, 7} {
		row := binary.BigEndian.AppendUint32([]byte{0, 0xFF, 0}, uint32(r))
		rows = append(rows, row)
		cells := make([]storage.Cell, 0, 2*n)
		for q := range n {
			qual := binary.BigEndian.AppendUint16(nil, uint16(q<<4|7))
			cells = append(cells,
				storage.Cell{Family: "t", Qualifier: qual, Timestamp: 1000, Value: binary.BigEndian.AppendUint64(nil, uint64(q))},
				storage.Cell{Family: "f", Qualifier: qual, Timestamp: 2000, Value: []byte{0xFF, byte(q)}})
		}
		if err := tb.Put(ctx, row, cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	missing := []byte("no such row")
	var dst []storage.Cell
	var buf []byte
	read := func(row []byte, o *storage.ReadOptions, want int) {
		var err error
		dst, buf, err = tb.GetAppend(ctx, dst[:0], buf[:0], row, o)
		if want == 0 && !errors.Is(err, storage.ErrNotFound) || want > 0 && (err != nil || len(dst) != want) {
			t.Fatalf("GetAppend(%x): %d cells, %v; want %d", row, len(dst), err, want)
		}
	}
	filtered := &storage.ReadOptions{Families: []string{"t"}, QualifierPrefix: []byte{0}, MaxVersions: 1}
	cases := map[string]func(){
		"wide":     func() { read(rows[0], nil, 720) },
		"filtered": func() { read(rows[0], filtered, 16) },
		"sizes": func() {
			for i, n := range []int{360, 1, 40, 7} {
				read(rows[i], nil, 2*n)
			}
		},
		"absent": func() { read(missing, nil, 0) },
	}
	cases["wide"]() // grow the buffers to the largest row once
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			fn() // warm the scanner and iterator pools
			if allocs := testing.AllocsPerRun(100, fn); allocs != 0 {
				t.Fatalf("%v allocations per call, want 0", allocs)
			}
		})
	}
	t.Run("get", func(t *testing.T) {
		allocs := testing.AllocsPerRun(100, func() {
			if cs, err := tb.Get(ctx, rows[0], nil); err != nil || len(cs) != 720 {
				t.Fatalf("Get: %d cells, %v", len(cs), err)
			}
		})
		if allocs != 2 {
			t.Fatalf("Get: %v allocations per call, want 2 (cells and bytes)", allocs)
		}
	})
}
