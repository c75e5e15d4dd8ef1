package storebench

import (
	"encoding/binary"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/storage"
)

// Table and family names of the bench cells.
const (
	TableName  = "tsdb"
	FamilyName = "t"
)

// Spec is the bench table: one family, one version, no TTL.
var Spec = storage.TableSpec{Name: TableName, Families: []storage.FamilySpec{{Name: FamilyName, MaxVersions: 1}}}

// Sizes of the OpenTSDB-shaped cell.
const (
	RowKeySize    = 26
	QualifierSize = 2
	ValueSize     = 8
)

// Cell is one OpenTSDB-shaped cell.
type Cell struct {
	Row       [RowKeySize]byte
	Qualifier [QualifierSize]byte
	Value     [ValueSize]byte
}

// RawKey appends the raw Pebble key of c, row‖qualifier.
func (c *Cell) RawKey(dst []byte) []byte {
	return append(append(dst, c.Row[:]...), c.Qualifier[:]...)
}

// fromPoint fills c the way OpenTSDB lays a point out with salt width 1 and
// 20 buckets; UIDs are the metric and host indexes plus one.
func (c *Cell) fromPoint(p *gen.Point, salts int) {
	sec := p.T / 1000
	base := sec - sec%3600
	k := c.Row[:0]
	k = append(k, 0)
	k = appendUID(k, p.Metric+1)
	k = binary.BigEndian.AppendUint32(k, uint32(base))
	for tag := 0; tag < 3; tag++ {
		k = appendUID(k, tag+1)
		k = appendUID(k, p.Host*3+tag+1)
	}
	c.Row[0] = byte(saltOf(c.Row[1:]) % salts)
	binary.BigEndian.PutUint16(c.Qualifier[:], uint16((sec-base)<<4|0x7))
	binary.BigEndian.PutUint64(c.Value[:], uint64(p.Int))
}

func appendUID(dst []byte, id int) []byte {
	return append(dst, byte(id>>16), byte(id>>8), byte(id))
}

// saltOf is a cheap stable hash; the bench only needs rows spread over the
// buckets as OpenTSDB spreads them.
func saltOf(b []byte) int {
	h := 0
	for _, c := range b {
		h = 31*h + int(c)
	}
	return h & 0x7fffffff
}

// Cells returns n cells made from the first n points of cfg's dataset.
func Cells(cfg gen.Config, n int) ([]Cell, error) {
	g, err := gen.New(cfg)
	if err != nil {
		return nil, err
	}
	cs := make([]Cell, 0, n)
	var p gen.Point
	for len(cs) < n && g.Next(&p) {
		cs = append(cs, Cell{})
		cs[len(cs)-1].fromPoint(&p, 20)
	}
	return cs, nil
}

// RowCells is the number of cells per row that Preload writes.
const RowCells = 360

// RowsCells returns the cells of rows full rows: the first hour of a dataset
// of rows series, series-major so each row's cells are consecutive.
func RowsCells(rows int) ([]Cell, error) {
	hosts := (rows + 9) / 10
	all, err := Cells(gen.Config{Hosts: hosts, Span: RowCells * 10 * time.Second}, hosts*10*RowCells)
	if err != nil {
		return nil, err
	}
	out := make([]Cell, 0, rows*RowCells)
	for s := 0; s < rows; s++ {
		for k := 0; k < RowCells; k++ {
			out = append(out, all[k*hosts*10+s])
		}
	}
	return out, nil
}
