package schema

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// rollupsQualifier is the record's cell holding the rollup configuration
// the store's rollup tables were written with (tsd.rollups.config, as
// OpenTSDB's JSON). Unlike the other settings it may change: intervals
// may be added, never changed or removed (the caller checks that).
const rollupsQualifier = "rollups"

// ReadRollups returns the rollup configuration recorded with the store,
// and whether one is.
func ReadRollups(ctx context.Context, meta storage.Table) ([]byte, bool, error) {
	cells, err := meta.Get(ctx, MetaRecordRow, &storage.ReadOptions{Families: []string{MetaFamilyRecord},
		Qualifiers: [][]byte{[]byte(rollupsQualifier)}})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && len(cells) == 0) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the rollup record: %w", err)
	}
	return cells[0].Value, true, nil
}

// WriteRollups records cfg as the store's rollup configuration if the
// recorded one is still old (nil: none recorded); otherwise
// storage.ErrConflict, and the caller reads it again.
func WriteRollups(ctx context.Context, meta storage.Table, old, cfg []byte) error {
	if cfg == nil {
		cfg = []byte{}
	}
	q := []byte(rollupsQualifier)
	return meta.CheckAndPut(ctx, MetaRecordRow, MetaFamilyRecord, q, old,
		[]storage.Cell{{Family: MetaFamilyRecord, Qualifier: q, Value: cfg}})
}
