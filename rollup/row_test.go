package rollup

import (
	"reflect"
	"testing"

	"github.com/tsd-db/tsd/internal/cell"
	"github.com/tsd-db/tsd/series"
)

// TestRowReaderPaths: the fast path for tsd's own rows (one packed
// column, or cell columns only) gives the cells the general path gives.
// A column no form knows sends a row down the general path, where it is
// ignored, so each row is decoded both ways and compared.
func TestRowReaderPaths(t *testing.T) {
	cfg := DefaultConfig()
	iv := cfg.Intervals[1] // 1h in 1d
	base := int64(1370476800)
	var pts []series.Point
	for h := int64(0); h < 24; h += 3 {
		for s := int64(0); s < 5; s++ {
			pts = append(pts, series.IntPoint((base+h*3600+s*60)*1000, h*10+s))
		}
	}
	cells := Fold(nil, &iv, base, pts)
	var cols []cell.Cell
	for i := range cells {
		q, err := AppendCellQualifier(nil, iv.Index(base, cells[i].T/1000))
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, cell.Cell{Qualifier: q, Value: AppendCellValue(nil, &cells[i])})
	}
	var enc RowEncoder
	packed, err := enc.Append(nil, &iv, base, cells)
	if err != nil {
		t.Fatal(err)
	}
	junk := cell.Cell{Qualifier: []byte("\xFF\xFF\xFF\xFF\xFF"), Value: []byte{1}}
	r := RowReader{IDs: cfg.IDs()}
	for name, row := range map[string][]cell.Cell{
		"cell columns": cols,
		"packed":       {{Qualifier: []byte(PackedQualifier), Value: packed}},
	} {
		fast, bad := r.Decode(nil, &iv, base, row)
		if bad != 0 || !reflect.DeepEqual(fast, cells) {
			t.Errorf("%s: fast path %d bad, %+v, want %+v", name, bad, fast, cells)
		}
		slow, bad := r.Decode(nil, &iv, base, append(append([]cell.Cell{}, row...), junk))
		if bad != 0 || !reflect.DeepEqual(slow, fast) {
			t.Errorf("%s: general path %d bad, %+v, want %+v", name, bad, slow, fast)
		}
	}
}

// TestRowReaderPartial reads OpenTSDB rollup rows holding only some
// aggregator columns, written byte by byte in OpenTSDB's format (1h cells
// in a 1d row, the default ids sum 0, count 1, min 2, max 3): without
// Partial they give no cell, as before; with it each cell the aggregators
// it has, the others named in Missing.
func TestRowReaderPartial(t *testing.T) {
	cfg := DefaultConfig()
	iv := cfg.Intervals[1]
	base := int64(1370476800)
	col := func(q, v string) cell.Cell { return cell.Cell{Qualifier: []byte(q), Value: []byte(v)} }
	at := func(idx int) int64 { return (base + int64(idx)*3600) * 1000 }
	notSum := uint8(1<<Count | 1<<Min | 1<<Max)
	for _, tc := range []struct {
		name string
		row  []cell.Cell
		want []Cell
	}{
		{"sum only", []cell.Cell{
			col("\x00\x00\x21", "\x01\x2C"),                         // sum of index 2: 300 on 2 bytes
			col("\x00\x00\x30", "\x07"),                             // sum of index 3: 7 on 1 byte
			col("sum:\x00\x5F", "\x40\x20\x00\x00\x00\x00\x00\x00"), // legacy: sum of index 5, float64 8
		}, []Cell{
			{T: at(2), Sum: series.IntPoint(at(2), 300), Missing: notSum},
			{T: at(3), Sum: series.IntPoint(at(3), 7), Missing: notSum},
			{T: at(5), Sum: series.Float64Point(at(5), 8), Missing: notSum},
		}},
		{"max only", []cell.Cell{col("\x03\x00\x21", "\xFF\x38")}, // max of index 2: -200
			[]Cell{{T: at(2), Max: series.IntPoint(at(2), -200), Missing: 1<<Sum | 1<<Count | 1<<Min}}},
		{"sum and count", []cell.Cell{
			col("\x00\x00\x20", "\x0A"), col("\x01\x00\x20", "\x02"), // index 2: sum 10, count 2
			col("\x01\x00\x30", "\x00"), // index 3: count 0, no points: left out
		}, []Cell{{T: at(2), Sum: series.IntPoint(at(2), 10), Count: 2, Missing: 1<<Min | 1<<Max}}},
	} {
		r := RowReader{IDs: cfg.IDs()}
		if got, bad := r.Decode(nil, &iv, base, tc.row); bad != 0 || len(got) != 0 {
			t.Errorf("%s: without Partial %d bad, %+v, want no cell", tc.name, bad, got)
		}
		r.Partial = true
		got, bad := r.Decode(nil, &iv, base, tc.row)
		if bad != 0 || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %d bad, %+v, want %+v", tc.name, bad, got, tc.want)
		}
	}
}
