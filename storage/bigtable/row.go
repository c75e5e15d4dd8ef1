package bigtable

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// appendRowCells appends r's cells to dst in storage order: family name,
// qualifier bytewise, timestamp descending. The client returns a row as a map
// by family, and the server orders families by creation, not by name, so the
// families are sorted here; within a family the server's order is already
// storage order, which is checked and restored if ever violated. The cells
// of one row share one row-key slice.
func appendRowCells(dst []storage.Cell, r bt.Row) []storage.Cell {
	if len(r) == 0 {
		return dst
	}
	fams := make([]string, 0, len(r))
	for f := range r {
		fams = append(fams, f)
	}
	slices.Sort(fams)
	var key []byte
	for _, f := range fams {
		items := r[f]
		if len(items) == 0 {
			continue
		}
		if key == nil {
			key = []byte(items[0].Row)
		}
		start := len(dst)
		for i := range items {
			dst = append(dst, itemCell(key, f, &items[i]))
		}
		sortCells(dst[start:])
	}
	return dst
}

// appendRowOwned is appendRowCells into the caller's memory: the row key,
// qualifiers and values are copied into buf, grown once up front so no
// append moves it while cells point into it, and the cells, each capped at
// its own bytes, are appended to dst. A row without items leaves both as
// they were.
func appendRowOwned(dst []storage.Cell, buf []byte, r bt.Row) ([]storage.Cell, []byte) {
	fams, key, size := make([]string, 0, len(r)), "", 0
	for f, items := range r {
		for i := range items {
			_, q := splitColumn(items[i].Column)
			size += len(q) + len(items[i].Value)
			key = items[i].Row
		}
		if len(items) > 0 {
			fams = append(fams, f)
		}
	}
	if len(fams) == 0 {
		return dst, buf
	}
	slices.Sort(fams)
	buf = slices.Grow(buf, len(key)+size)
	k := len(buf)
	buf = append(buf, key...)
	row := buf[k:len(buf):len(buf)]
	for _, f := range fams {
		start := len(dst)
		for _, it := range r[f] {
			_, q := splitColumn(it.Column)
			c := storage.Cell{Row: row, Family: f, Timestamp: int64(it.Timestamp)}
			c.Qualifier, buf = appendCapped(buf, q)
			c.Value, buf = appendCapped(buf, it.Value)
			dst = append(dst, c)
		}
		sortCells(dst[start:])
	}
	return dst, buf
}

// appendCapped appends b to buf, which has room for it, and returns the
// copy capped at its length with the grown buf.
func appendCapped[B string | []byte](buf []byte, b B) ([]byte, []byte) {
	k := len(buf)
	buf = append(buf, b...)
	return buf[k:len(buf):len(buf)], buf
}

func itemCell(key []byte, family string, it *bt.ReadItem) storage.Cell {
	_, q := splitColumn(it.Column)
	return storage.Cell{
		Row:       key,
		Family:    family,
		Qualifier: []byte(q),
		Timestamp: int64(it.Timestamp),
		Value:     it.Value,
	}
}

// sortCells puts the cells of one family in storage order if they are not.
func sortCells(cells []storage.Cell) {
	if !slices.IsSortedFunc(cells, compareCells) {
		slices.SortStableFunc(cells, compareCells)
	}
}

func compareCells(a, b storage.Cell) int {
	if c := strings.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Qualifier, b.Qualifier); c != 0 {
		return c
	}
	return cmp.Compare(b.Timestamp, a.Timestamp)
}
