package main

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage"
)

// openAnnotations makes the store of /api/annotation over the data table,
// with the key layout recorded with the store (prepareStore read it), the
// same layout the flusher writes points with.
func (c *config) openAnnotations(ctx context.Context, db storage.DB) (*annotation.Store, error) {
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return nil, err
	}
	s := c.settings
	sl, err := salt.New(s.SaltWidth, s.SaltBuckets)
	if err != nil {
		return nil, err
	}
	layout := rowkey.Layout{Widths: s.Widths, Salt: sl, MaxTags: c.maxTags}
	layout.EnsureDefaults()
	st, err := annotation.NewStore(annotation.Options{Table: data, Layout: &layout})
	if err != nil {
		return nil, fmt.Errorf("annotations: %w", err)
	}
	return st, nil
}
