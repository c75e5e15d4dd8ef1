package lookup

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Error classes of Lookup; test with errors.Is.
var (
	// ErrMissingQuery: neither a metric nor a tag was given.
	ErrMissingQuery = errors.New("Missing metric and tags. Please supply at least one value.")
	// ErrUnknownName: a metric, tag key or tag value has no UID.
	ErrUnknownName = errors.New("Unable to resolve one or more UIDs")
	// ErrUnknownUID: a matched series names a UID that has no name.
	ErrUnknownUID = errors.New("Unable to resolve one or more TSUIDs")
)

// Series is one series a lookup found.
type Series struct {
	// TSUID is metric UID ‖ (tagk UID ‖ tagv UID)* in upper-case hex.
	TSUID string
	// Metric is the metric's name.
	Metric string
	// Tags are the series' tags, sorted by key.
	Tags []Pair
}

// Result is the answer to a lookup.
type Result struct {
	// Total counts the series returned, as OpenTSDB's totalResults does
	// (TimeSeriesLookup stops at the limit).
	Total int
	// Series are the first Limit matches in TSUID order.
	Series []Series
}

// wild reports whether a lookup field matches anything.
func wild(s string) bool { return s == "" || s == "*" }

// plan is a lookup resolved to UIDs.
type plan struct {
	metric  uid.ID // index.NameKey: every metric
	filters []index.Filter
	anyVals map[uid.ID]bool // key-less values, ORed; nil when none
}

// Lookup finds the series matching q in the series index.
func (s *Service) Lookup(ctx context.Context, q *Query) (*Result, error) {
	if q.Metric == "" && len(q.Tags) == 0 {
		return nil, ErrMissingQuery
	}
	p, err := s.plan(ctx, q)
	if err != nil {
		return nil, err
	}
	bm, err := s.index.Postings(ctx, p.metric, p.filters)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	var tsuids []string
	s.index.ForEach(bm, func(se index.Series) bool {
		if p.anyVals == nil || s.hasValue(se.TSUID, p.anyVals) {
			tsuids = append(tsuids, se.TSUID)
		}
		return true
	})
	slices.Sort(tsuids)
	if q.Limit > 0 && len(tsuids) > q.Limit {
		tsuids = tsuids[:q.Limit]
	}
	res := &Result{Total: len(tsuids)}
	for _, t := range tsuids {
		se, err := s.describe(ctx, t)
		if err != nil {
			return nil, err
		}
		res.Series = append(res.Series, se)
	}
	return res, nil
}

// plan resolves q's names; a name without a UID is ErrUnknownName.
func (s *Service) plan(ctx context.Context, q *Query) (*plan, error) {
	p := &plan{metric: index.NameKey}
	if !wild(q.Metric) {
		id, err := s.resolve(ctx, uid.Metric, q.Metric)
		if err != nil {
			return nil, err
		}
		p.metric = id
	}
	type group struct {
		any  bool
		vals []string
	}
	groups := map[uid.ID]*group{}
	for _, t := range q.Tags {
		if wild(t.Key) {
			if err := s.addAnyValue(ctx, p, t.Value); err != nil {
				return nil, err
			}
			continue
		}
		k, err := s.resolve(ctx, uid.TagK, t.Key)
		if err != nil {
			return nil, err
		}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		if wild(t.Value) {
			g.any = true
			continue
		}
		if _, err := s.resolve(ctx, uid.TagV, t.Value); err != nil {
			return nil, err
		}
		g.vals = append(g.vals, t.Value)
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		f := index.Filter{TagK: k, Type: index.LiteralOr, Values: g.vals}
		if g.any {
			f = index.Filter{TagK: k, Type: index.Wildcard, Pattern: "*"}
		}
		p.filters = append(p.filters, f)
	}
	return p, nil
}

// addAnyValue adds a key-less value (*=v); *=* matches everything.
func (s *Service) addAnyValue(ctx context.Context, p *plan, v string) error {
	if wild(v) {
		return nil
	}
	id, err := s.resolve(ctx, uid.TagV, v)
	if err != nil {
		return err
	}
	if p.anyVals == nil {
		p.anyVals = map[uid.ID]bool{}
	}
	p.anyVals[id] = true
	return nil
}

// resolve looks up a name's UID, mapping "no such name" to ErrUnknownName.
func (s *Service) resolve(ctx context.Context, kind uid.Kind, name string) (uid.ID, error) {
	id, err := s.uids.Lookup(ctx, kind, []byte(name))
	switch {
	case errors.Is(err, uid.ErrNoSuchName), errors.Is(err, uid.ErrInvalidName), errors.Is(err, uid.ErrNotLatin1):
		return 0, fmt.Errorf("%w: %v", ErrUnknownName, err)
	case err != nil:
		return 0, fmt.Errorf("lookup %s %q: %w", kind, name, err)
	}
	return id, nil
}

// hasValue reports whether a TSUID has a tag whose value is in vals.
func (s *Service) hasValue(tsuid string, vals map[uid.ID]bool) bool {
	wm, wk, wv := s.uids.Width(uid.Metric), s.uids.Width(uid.TagK), s.uids.Width(uid.TagV)
	b := []byte(tsuid)
	if len(b) < wm {
		return false
	}
	for b = b[wm:]; len(b) >= wk+wv; b = b[wk+wv:] {
		if id, _, err := uid.ParseID(b[wk:], wv); err == nil && vals[id] {
			return true
		}
	}
	return false
}

// describe names the UIDs of a TSUID.
func (s *Service) describe(ctx context.Context, tsuid string) (Series, error) {
	se := Series{TSUID: strings.ToUpper(hex.EncodeToString([]byte(tsuid)))}
	b := []byte(tsuid)
	id, b, err := uid.ParseID(b, s.uids.Width(uid.Metric))
	if err != nil {
		return se, fmt.Errorf("lookup: series %s: %w", se.TSUID, err)
	}
	if se.Metric, err = s.name(ctx, uid.Metric, id); err != nil {
		return se, err
	}
	for len(b) > 0 {
		var k, v uid.ID
		var p Pair
		if k, b, err = uid.ParseID(b, s.uids.Width(uid.TagK)); err == nil {
			v, b, err = uid.ParseID(b, s.uids.Width(uid.TagV))
		}
		if err != nil {
			return se, fmt.Errorf("lookup: series %s: %w", se.TSUID, err)
		}
		if p.Key, err = s.name(ctx, uid.TagK, k); err == nil {
			p.Value, err = s.name(ctx, uid.TagV, v)
		}
		if err != nil {
			return se, err
		}
		se.Tags = append(se.Tags, p)
	}
	slices.SortFunc(se.Tags, func(a, b Pair) int { return cmp.Compare(a.Key, b.Key) })
	return se, nil
}

// name resolves a UID, mapping "no such UID" to ErrUnknownUID.
func (s *Service) name(ctx context.Context, kind uid.Kind, id uid.ID) (string, error) {
	n, err := s.uids.Name(ctx, kind, id)
	if errors.Is(err, uid.ErrNoSuchID) {
		return "", fmt.Errorf("%w: %v", ErrUnknownUID, err)
	}
	return n, err
}
