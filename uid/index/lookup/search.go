package lookup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// A search (/api/search/tsmeta, tsmeta_summary, tsuids) selects series
// with lookup's form, metric{tagk=value,...}, where every name may hold *
// globs (* matches any run of characters, the whole name must match), an
// empty or "*" metric is every metric and an empty or "*" key is any key.
// Unlike a lookup, a name without a UID matches nothing instead of failing.
// "" and "*" select every series.

// ParseSearch parses a search query.
func ParseSearch(q string) (Query, error) {
	if q == "" || q == "*" {
		return Query{Metric: "*"}, nil
	}
	return ParseM(q)
}

// searchPlan is a search resolved against the index: filters for what the
// index can answer, globs checked on each candidate's names.
type searchPlan struct {
	metric  uid.ID
	filters []index.Filter
	none    bool  // a literal name without a UID: nothing matches
	metricG *glob // nil: the index filters decided
	pairs   []globPair
}

type globPair struct{ key, value *glob } // nil: any

// SearchSeries returns how many series match q and the TSUIDs (raw bytes
// as strings) of those in [start, start+limit) in TSUID order; limit 0 or
// less is no limit.
func (s *Service) SearchSeries(ctx context.Context, q *Query, start, limit int) (int, []string, error) {
	found, err := s.matchSeries(ctx, q)
	if err != nil {
		return 0, nil, err
	}
	var tsuids []string
	for _, se := range page(found, start, limit) {
		tsuids = append(tsuids, se.TSUID)
	}
	return len(found), tsuids, nil
}

// Span is a series a search matched, with the hours the index records
// for it.
type Span struct {
	// TSUID is the TSUID's bytes as a string.
	TSUID string
	// FirstMs and LastMs bound the series' data (the end of its last hour);
	// Known is false when the index does not know its hours.
	FirstMs, LastMs int64
	Known           bool
}

// SearchSpans returns every series q matches, in TSUID order, with their
// hours.
func (s *Service) SearchSpans(ctx context.Context, q *Query) ([]Span, error) {
	found, err := s.matchSeries(ctx, q)
	out := make([]Span, len(found))
	for i, se := range found {
		out[i] = Span{TSUID: se.TSUID, FirstMs: se.First * 1000, LastMs: (se.Last+3600)*1000 - 1, Known: se.HasSpan}
	}
	return out, err
}

// matchSeries returns the series q matches, in TSUID order.
func (s *Service) matchSeries(ctx context.Context, q *Query) ([]index.Series, error) {
	p, err := s.searchPlan(ctx, q)
	if err != nil || p.none {
		return nil, err
	}
	bm, err := s.index.Postings(ctx, p.metric, p.filters)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var cands []index.Series
	s.index.ForEach(bm, func(se index.Series) bool {
		cands = append(cands, se)
		return true
	})
	found := cands[:0]
	for _, se := range cands {
		ok, err := s.matchNames(ctx, p, se.TSUID)
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, se)
		}
	}
	slices.SortFunc(found, func(a, b index.Series) int { return strings.Compare(a.TSUID, b.TSUID) })
	return found, nil
}

func page[T any](all []T, start, limit int) []T {
	if start < 0 || start >= len(all) {
		return nil
	}
	all = all[start:]
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	return all
}

func hasGlob(s string) bool { return strings.IndexByte(s, '*') >= 0 }

func (s *Service) searchPlan(ctx context.Context, q *Query) (*searchPlan, error) {
	p := &searchPlan{metric: index.NameKey}
	switch {
	case wild(q.Metric):
	case hasGlob(q.Metric):
		g := newGlob(q.Metric)
		p.metricG = &g
		p.filters = append(p.filters, index.Filter{TagK: index.NameKey, Type: index.Wildcard, Pattern: q.Metric})
	default:
		id, err := s.resolve(ctx, uid.Metric, q.Metric)
		if errors.Is(err, ErrUnknownName) {
			return &searchPlan{none: true}, nil
		} else if err != nil {
			return nil, err
		}
		p.metric = id
	}
	for _, t := range q.Tags {
		if wild(t.Key) || hasGlob(t.Key) {
			p.pairs = append(p.pairs, globPair{key: optGlob(t.Key), value: optGlob(t.Value)})
			continue
		}
		k, err := s.resolve(ctx, uid.TagK, t.Key)
		if errors.Is(err, ErrUnknownName) {
			return &searchPlan{none: true}, nil
		} else if err != nil {
			return nil, err
		}
		f := index.Filter{TagK: k, Type: index.Wildcard, Pattern: "*"}
		switch {
		case wild(t.Value):
		case hasGlob(t.Value):
			f.Pattern = t.Value
			p.pairs = append(p.pairs, globPair{key: optGlob(t.Key), value: optGlob(t.Value)})
		default:
			f = index.Filter{TagK: k, Type: index.LiteralOr, Values: []string{t.Value}}
		}
		p.filters = append(p.filters, f)
	}
	return p, nil
}

func optGlob(s string) *glob {
	if wild(s) {
		return nil
	}
	g := newGlob(s)
	return &g
}

// matchNames checks the globs the index filters only narrowed.
func (s *Service) matchNames(ctx context.Context, p *searchPlan, tsuid string) (bool, error) {
	if p.metricG == nil && len(p.pairs) == 0 {
		return true, nil
	}
	se, err := s.describe(ctx, tsuid)
	if err != nil {
		return false, err
	}
	if p.metricG != nil && !p.metricG.match(se.Metric) {
		return false, nil
	}
	for _, gp := range p.pairs {
		if !slices.ContainsFunc(se.Tags, func(t Pair) bool {
			return (gp.key == nil || gp.key.match(t.Key)) && (gp.value == nil || gp.value.match(t.Value))
		}) {
			return false, nil
		}
	}
	return true, nil
}

// Describe names the UIDs of a TSUID (raw bytes as a string).
func (s *Service) Describe(ctx context.Context, tsuid string) (Series, error) {
	return s.describe(ctx, tsuid)
}

// TSMetaOf returns the TSMeta of a series the index holds.
func (s *Service) TSMetaOf(ctx context.Context, tsuid []byte) (*TSMeta, error) {
	if s.meta == nil {
		return nil, ErrNoTSMetaStore
	}
	m, err := s.meta.Get(ctx, tsuid)
	if err != nil {
		return nil, err
	}
	return s.withUIDMeta(ctx, m)
}

// SearchUIDMeta returns how many UIDs have a name matching the glob q
// ("" or "*": every name) and the UIDMeta of those in [start, start+limit),
// metrics first, then tag keys, then tag values, each in name order.
func (s *Service) SearchUIDMeta(ctx context.Context, q string, start, limit int) (int, []uid.UIDMeta, error) {
	g := optGlob(q)
	prefix := q
	if i := strings.IndexByte(q, '*'); i >= 0 {
		prefix = q[:i]
	}
	type ref struct {
		kind uid.Kind
		id   uid.ID
	}
	var refs []ref
	for _, kind := range []uid.Kind{uid.Metric, uid.TagK, uid.TagV} {
		err := s.uids.ForEach(ctx, kind, prefix, func(name string, id uid.ID) error {
			if g == nil || g.match(name) {
				refs = append(refs, ref{kind, id})
			}
			return nil
		})
		if err != nil {
			return 0, nil, fmt.Errorf("search uidmeta: %w", err)
		}
	}
	var out []uid.UIDMeta
	for _, r := range page(refs, start, limit) {
		m, err := s.uids.GetMeta(ctx, r.kind, r.id)
		if err != nil {
			return 0, nil, err
		}
		out = append(out, m)
	}
	return len(refs), out, nil
}

// glob is a name pattern where * matches any run of characters; the whole
// name must match.
type glob struct{ parts []string }

func newGlob(p string) glob { return glob{parts: strings.Split(p, "*")} }

func (g glob) match(s string) bool {
	ps := g.parts
	if len(ps) == 1 {
		return s == ps[0]
	}
	if !strings.HasPrefix(s, ps[0]) {
		return false
	}
	s = s[len(ps[0]):]
	last := ps[len(ps)-1]
	for _, p := range ps[1 : len(ps)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
