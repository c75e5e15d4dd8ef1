package fsck

import (
	"context"
	"fmt"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// checkIndex reports the index's series (of the checked metrics) that no
// row of the table holds. The index has no removal, so they stay.
func (c *checker) checkIndex(ctx context.Context) error {
	metrics := []uid.ID{index.NameKey}
	if len(c.opts.Metrics) > 0 {
		metrics = metrics[:0]
		for _, m := range c.opts.Metrics {
			id, _, err := uid.ParseID(m, len(m))
			if err != nil {
				return err
			}
			metrics = append(metrics, id)
		}
	}
	for _, m := range metrics {
		bm, err := c.opts.Index.Postings(ctx, m, nil)
		if err != nil {
			return fmt.Errorf("fsck: list the index's series: %w", err)
		}
		bm.AndNot(c.seen)
		for it := bm.Iterator(); it.HasNext(); {
			s, ok := c.opts.Index.Series(it.Next())
			if !ok {
				continue
			}
			c.record(Finding{Kind: IndexWithoutRows, Row: []byte(s.TSUID),
				Detail:  fmt.Sprintf("index series %d has no row in the table", s.ID),
				Unfixed: c.unfixed("the index has no removal; the entry costs a lookup, never a wrong answer")})
		}
	}
	return nil
}
