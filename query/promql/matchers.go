package promql

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// plan is a matcher list reduced to one Postings call.
type plan struct {
	metric  uid.ID // index.NameKey: every metric
	filters []index.Filter
	none    bool // a matcher no series can pass
}

// planMatchers turns ms into index filters. The first = on __name__ picks
// the metric; a matcher on an unknown tag key is decided on "" (no series
// has the label).
func (q *Queryable) planMatchers(ctx context.Context, ms []*labels.Matcher) (plan, error) {
	p := plan{metric: index.NameKey}
	for _, m := range ms {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual && p.metric == index.NameKey && m.Value != "" {
			id, ok, err := q.lookup(ctx, uid.Metric, m.Value)
			if err != nil || !ok {
				p.none = !ok
				return p, err
			}
			p.metric = id
			continue
		}
		key := index.NameKey
		if m.Name != labels.MetricName {
			id, ok, err := q.lookup(ctx, uid.TagK, m.Name)
			if err != nil {
				return p, err
			}
			if !ok {
				if !m.Matches("") {
					p.none = true
					return p, nil
				}
				continue
			}
			key = id
		}
		if f := filterOf(key, m); validFilter(f) {
			p.filters = append(p.filters, f)
		}
		// else: an expression Prometheus takes as a literal that RE2
		// refuses (invalid UTF-8); the label check after the index
		// decides it.
	}
	return p, nil
}

// validFilter reports whether the index accepts f. Only expressions can
// fail: = and != are checked for nothing, saving Validate's allocations
// (the filter escapes into its error) on every equality matcher.
func validFilter(f index.Filter) bool {
	if f.Type == index.Equal || f.Type == index.NotEqual {
		return true
	}
	return f.Validate() == nil
}

// filterOf returns the index filter of m on key. Prometheus compiles
// expressions as ^(?s:expr)$; the index anchors them itself, and .* and .+
// keep their shape so that the index can answer them from its key
// postings.
func filterOf(key uid.ID, m *labels.Matcher) index.Filter {
	f := index.Filter{TagK: key, Pattern: m.Value}
	switch m.Type {
	case labels.MatchEqual:
		f.Type = index.Equal
	case labels.MatchNotEqual:
		f.Type = index.NotEqual
	case labels.MatchRegexp:
		f.Type = index.RegexMatch
	case labels.MatchNotRegexp:
		f.Type = index.RegexNoMatch
	}
	if f.Type >= index.RegexMatch && m.Value != ".*" && m.Value != ".+" {
		f.Pattern = "(?s:" + m.Value + ")"
	}
	return f
}

// lookup returns the UID of name; ok is false when it has none.
func (q *Queryable) lookup(ctx context.Context, kind uid.Kind, name string) (uid.ID, bool, error) {
	id, err := q.opts.UIDs.Lookup(ctx, kind, []byte(name))
	switch {
	case errors.Is(err, uid.ErrNoSuchName):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("promql: look up %s %q: %w", kind, name, err)
	}
	return id, true, nil
}

// postings returns the series ms select whose index span meets [start,
// end]; nil when none can.
func (q *Queryable) postings(ctx context.Context, ms []*labels.Matcher, start, end int64) (*roaring.Bitmap, error) {
	p, err := q.planMatchers(ctx, ms)
	if err != nil || p.none {
		return nil, err
	}
	b, err := q.opts.Index.Postings(ctx, p.metric, p.filters)
	if err != nil {
		return nil, fmt.Errorf("promql: select series: %w", err)
	}
	if start <= end {
		q.opts.Index.RestrictTime(b, max(start, 0), end)
	}
	return b, nil
}

// matchesAll reports whether l passes every matcher.
func matchesAll(l labels.Labels, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(l.Get(m.Name)) {
			return false
		}
	}
	return true
}
