package promql_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/series"
	tsdstorage "github.com/tsd-db/tsd/storage"
)

// downgradeCells rewrites about half the stored rollup columns as tsd
// wrote them before cells kept their first point: a packed column as
// version 01 (the four aggregate sections alone), a cell column with
// header bits 6-7 zero and no first point. It returns how many columns
// it rewrote.
func (e *rollupModelEnv) downgradeCells(t *testing.T, rng *rand.Rand) int {
	t.Helper()
	ctx := context.Background()
	ro, err := ensureRollupTables(ctx, e.s.db)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tbl := range ro.Tables {
		if tbl == nil {
			continue
		}
		var muts []tsdstorage.Mutation
		sc := tbl.Scan(ctx, &tsdstorage.ScanOptions{})
		for sc.Next() {
			row := sc.Row()
			for _, c := range row.Cells {
				if rng.IntN(2) == 0 {
					continue
				}
				v, ok := oldCellValue(t, c.Qualifier, c.Value)
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

// oldCellValue returns value (of a tsd rollup column with qualifier q) in
// the encoding that predates first points, and false for a column that
// has none (OpenTSDB's) or is in it already.
func oldCellValue(t *testing.T, q, value []byte) ([]byte, bool) {
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
	if string(q) != rollup.PackedQualifier || value[0] != 2 {
		return nil, false
	}
	// 02 ‖ sum, count, min, max ‖ first: keep 01 and the four.
	rest := value[1:]
	for range 4 {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			t.Fatalf("packed value %x", value)
		}
		rest = rest[k+int(l):]
	}
	v := slices.Clone(value[:len(value)-len(rest)])
	v[0] = 1
	return v, true
}
