package storebench

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/storage/pebble"
)

func TestCellShape(t *testing.T) {
	cs, err := Cells(gen.Config{}, 2000)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[[RowKeySize]byte]bool{}
	for i := range cs[:1000] {
		rows[cs[i].Row] = true
	}
	if len(rows) != 1000 {
		t.Fatalf("a 1,000-cell batch touches %d rows, want 1000", len(rows))
	}
	c := cs[1000] // second timestamp, first series
	if base := binary.BigEndian.Uint32(c.Row[4:8]); int64(base) != gen.DefaultStart.Unix() {
		t.Fatalf("base hour %d", base)
	}
	if q := binary.BigEndian.Uint16(c.Qualifier[:]); q != 10<<4|0x7 {
		t.Fatalf("qualifier %#x, want delta 10 s with 8-byte int flags", q)
	}
	if c.Row[0] >= 20 || c.Row != cs[0].Row {
		t.Fatalf("salt %d or row changed between timestamps", c.Row[0])
	}
}

func TestRowsCells(t *testing.T) {
	cs, err := RowsCells(15)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 15*RowCells {
		t.Fatalf("%d cells", len(cs))
	}
	for r := 0; r < 15; r++ {
		for k := 1; k < RowCells; k++ {
			if cs[r*RowCells+k].Row != cs[r*RowCells].Row {
				t.Fatalf("row %d cell %d in another row", r, k)
			}
		}
	}
}

// testTarget puts, preloads and reads back through t.
func testTarget(t *testing.T, tg Target) {
	ctx := context.Background()
	cs, err := Cells(gen.Config{Hosts: 3}, 2500)
	if err != nil {
		t.Fatal(err)
	}
	if rate, err := PutRate(ctx, tg, cs, DefaultBatch, 2); err != nil || rate <= 0 {
		t.Fatalf("PutRate = %v, %v", rate, err)
	}
	keys, err := Preload(ctx, tg, 12)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []ReadOp{OpGet, OpScan, OpGetReuse} {
		// ReadLatency fails unless every row holds exactly RowCells cells.
		if ns, err := ReadLatency(ctx, tg, keys, 30, op); err != nil || ns <= 0 {
			t.Fatalf("ReadLatency(%v) = %v, %v", op, ns, err)
		}
	}
	for _, get := range []func(context.Context, []byte) (int, error){tg.Get, tg.GetReuse} {
		if n, err := get(ctx, []byte("no such row")); err == nil && n != 0 {
			t.Fatalf("missing row has %d cells", n)
		}
	}
}

func TestRaw(t *testing.T) {
	r, err := OpenRaw(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	testTarget(t, r)
}

func TestTable(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := NewTable(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	testTarget(t, tbl)
}
