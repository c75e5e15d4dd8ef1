package dirsize

import (
	"context"
	"fmt"
	"slices"

	"github.com/tsd-db/tsd/storage"
)

// DefaultDataTables are the tables counted as data; every other table is
// index (UIDs, the series index, tsd's meta table).
var DefaultDataTables = []string{"tsdb"}

// Compacter is implemented by engines that can compact their whole store
// (storage/pebble does).
type Compacter interface {
	Compact(ctx context.Context) error
}

// TSD compacts db when it can, then measures its directory dir as a Pebble
// directory and splits the sstable bytes between data and index tables in
// proportion to their logical bytes. points is the number of points stored
// (0 if unknown).
func TSD(ctx context.Context, db storage.DB, dir string, dataTables []string, points uint64) (Report, error) {
	if c, ok := db.(Compacter); ok {
		if err := c.Compact(ctx); err != nil {
			return Report{}, fmt.Errorf("compact %s: %w", dir, err)
		}
	}
	data, index, err := logicalSplit(ctx, db, dataTables)
	if err != nil {
		return Report{}, err
	}
	r, err := Pebble(dir)
	if err != nil {
		return r, err
	}
	r.Kind, r.Points = "tsd", points
	if data+index > 0 {
		sst := r.Data
		r.Data = int64(float64(sst) * float64(data) / float64(data+index))
		r.Index = sst - r.Data
	}
	r.Note = fmt.Sprintf("data/index: sstable bytes split by logical bytes (data tables %v: %d, other tables: %d)", dataTables, data, index)
	return r, nil
}

// logicalSplit sums the logical bytes of the data tables and of the others.
func logicalSplit(ctx context.Context, db storage.DB, dataTables []string) (data, index int64, err error) {
	specs, err := db.Tables(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range specs {
		n, err := tableBytes(ctx, db, s.Name)
		if err != nil {
			return 0, 0, err
		}
		if slices.Contains(dataTables, s.Name) {
			data += n
		} else {
			index += n
		}
	}
	return data, index, nil
}

func tableBytes(ctx context.Context, db storage.DB, name string) (int64, error) {
	t, err := db.Table(ctx, name)
	if err != nil {
		return 0, err
	}
	sc := t.Scan(ctx, &storage.ScanOptions{})
	var n int64
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			n += int64(len(c.Row) + len(c.Family) + len(c.Qualifier) + 8 + len(c.Value))
		}
	}
	if err := sc.Close(); err != nil {
		return 0, fmt.Errorf("scan table %s: %w", name, err)
	}
	return n, nil
}
