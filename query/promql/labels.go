package promql

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsd-db/tsd/uid"
)

// labelCache maps TSUIDs to their label sets. Labels values are immutable,
// so one is shared by every query that finds it.
type labelCache struct {
	max int
	mu  struct {
		sync.RWMutex
		m map[string]labels.Labels
	}
}

func (c *labelCache) init(max int) {
	c.max = max
	c.mu.m = make(map[string]labels.Labels)
}

func (c *labelCache) get(tsuid string) (labels.Labels, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l, ok := c.mu.m[tsuid]
	return l, ok
}

func (c *labelCache) put(tsuid string, l labels.Labels) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.m) >= c.max {
		clear(c.mu.m)
	}
	c.mu.m[tsuid] = l
}

func (c *labelCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.mu.m)
}

// seriesLabels returns the label set of tsuid: __name__ and one label per
// tag. A UID without a name is uid.ErrNoSuchID.
func (q *Queryable) seriesLabels(ctx context.Context, b *labels.ScratchBuilder, tsuid string) (labels.Labels, error) {
	if l, ok := q.labels.get(tsuid); ok {
		return l, nil
	}
	l, err := q.nameTSUID(ctx, b, []byte(tsuid))
	if err != nil {
		return labels.EmptyLabels(), fmt.Errorf("promql: labels of series %x: %w", tsuid, err)
	}
	q.labels.put(tsuid, l)
	return l, nil
}

// nameTSUID names every UID of tsuid.
func (q *Queryable) nameTSUID(ctx context.Context, b *labels.ScratchBuilder, tsuid []byte) (labels.Labels, error) {
	u := q.opts.UIDs
	b.Reset()
	id, rest, err := uid.ParseID(tsuid, u.Width(uid.Metric))
	if err != nil {
		return labels.EmptyLabels(), err
	}
	name, err := u.Name(ctx, uid.Metric, id)
	if err != nil {
		return labels.EmptyLabels(), err
	}
	b.Add(labels.MetricName, name)
	for len(rest) > 0 {
		var k, v uid.ID
		if k, rest, err = uid.ParseID(rest, u.Width(uid.TagK)); err != nil {
			return labels.EmptyLabels(), err
		}
		if v, rest, err = uid.ParseID(rest, u.Width(uid.TagV)); err != nil {
			return labels.EmptyLabels(), err
		}
		kn, err := u.Name(ctx, uid.TagK, k)
		if err != nil {
			return labels.EmptyLabels(), err
		}
		vn, err := u.Name(ctx, uid.TagV, v)
		if err != nil {
			return labels.EmptyLabels(), err
		}
		b.Add(kn, vn)
	}
	b.Sort()
	return b.Labels(), nil
}
