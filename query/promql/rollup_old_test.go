package promql_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	tsdstorage "github.com/tsd-db/tsd/storage"
)

// downgradeCells rewrites about half the stored rollup columns as tsd
// wrote them before cells kept their first point: a packed column as
// version 01 (the four aggregate sections alone, entropy-coded dense
// columns), a cell column with header bits 6-7 zero and no first point.
// It returns how many columns it rewrote.
func (e *rollupModelEnv) downgradeCells(t *testing.T, rng *rand.Rand) int {
	t.Helper()
	ctx := context.Background()
	ro, err := ensureRollupTables(ctx, e.s.db)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, tbl := range ro.Tables {
		if tbl == nil {
			continue
		}
		iv := &ro.Config.Intervals[i]
		var muts []tsdstorage.Mutation
		sc := tbl.Scan(ctx, &tsdstorage.ScanOptions{})
		for sc.Next() {
			row := sc.Row()
			for _, c := range row.Cells {
				if rng.IntN(2) == 0 {
					continue
				}
				v, ok := oldCellValue(t, iv, c.Qualifier, c.Value)
				if !ok {
					continue
				}
				c.Row, c.Qualifier, c.Value = nil, slices.Clone(c.Qualifier), v
				muts = append(muts, tsdstorage.Mutation{Row: slices.Clone(row.Key),
					Deletes: []tsdstorage.Deletion{{Kind: tsdstorage.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier}},
					Cells:   []tsdstorage.Cell{c}})
				n++
			}
		}
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Apply(ctx, muts); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// oldCellValue returns value (of a tsd rollup column of iv with
// qualifier q) in the encoding that predates first points, and false for
// a column that has none (OpenTSDB's) or is in it already.
func oldCellValue(t *testing.T, iv *rollup.Interval, q, value []byte) ([]byte, bool) {
	t.Helper()
	if _, ok := rollup.ParseCellQualifier(q); ok {
		c, err := rollup.ParseCellValue(0, value)
		if err != nil {
			t.Fatal(err)
		}
		if c.Edge == rollup.EdgeUnknown {
			return nil, false
		}
		c.Edge, c.First = rollup.EdgeUnknown, series.Point{}
		v := rollup.AppendCellValue(nil, &c)
		if v[0]>>6 != 0 {
			t.Fatalf("cell value %x keeps a first point", v)
		}
		return v, true
	}
	if string(q) != rollup.PackedQualifier || value[0] == 1 {
		return nil, false
	}
	var dec rollup.RowDecoder
	cells, err := dec.Decode(nil, iv, 0, value)
	if err != nil {
		t.Fatal(err)
	}
	return packedV1(t, iv, cells), true
}

// packedV1 is the version 01 packed value of cells, of iv's row based at
// 0: 01, then for sum, count, min and max a uvarint length and a dense
// column of the aggregate at millisecond idx, the cell's index.
func packedV1(t *testing.T, iv *rollup.Interval, cells []rollup.Cell) []byte {
	t.Helper()
	var enc rowkey.DenseEncoder
	v := []byte{1}
	for a := range rollup.NumAggs {
		var pts []series.Point
		for i := range cells {
			p := cells[i].Value(a)
			p.T = int64(iv.Index(0, cells[i].T/1000))
			pts = append(pts, p)
		}
		sec, err := enc.Append(nil, 0, pts)
		if err != nil {
			t.Fatal(err)
		}
		v = append(binary.AppendUvarint(v, uint64(len(sec))), sec...)
	}
	return v
}
