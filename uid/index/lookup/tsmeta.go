package lookup

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// Error classes of the TSMeta methods; test with errors.Is.
var (
	// ErrNoTSMeta: the series is neither in the index nor has stored
	// TSMeta (OpenTSDB's 404 "Could not find Timeseries meta data").
	ErrNoTSMeta = errors.New("Could not find Timeseries meta data")
	// ErrBadTSUID: a TSUID is not hex, or its length does not fit the UID
	// widths.
	ErrBadTSUID = errors.New("invalid TSUID")
	// ErrNoTSMetaStore: the service was built without a TSMeta store.
	ErrNoTSMetaStore = errors.New("lookup: no TSMeta store")
)

// TSMeta is a series' TSMeta with the UIDMeta of its metric and tags,
// as OpenTSDB's TSMeta.getTSMeta loads it.
type TSMeta struct {
	tsmeta.Meta
	// TSUIDHex is the TSUID in upper-case hex.
	TSUIDHex string
	Metric   uid.UIDMeta
	// Tags are the UIDMeta of tag key, tag value, tag key, ... in TSUID
	// order.
	Tags []uid.UIDMeta
}

// HasTSMeta reports whether the service has a TSMeta store.
func (s *Service) HasTSMeta() bool { return s.meta != nil }

// ParseTSUID decodes a hex TSUID and checks its length against the UID
// widths.
func (s *Service) ParseTSUID(h string) ([]byte, error) {
	b, err := hex.DecodeString(h)
	wm, wp := s.uids.Width(uid.Metric), s.uids.Width(uid.TagK)+s.uids.Width(uid.TagV)
	if err == nil && (len(b) < wm || (len(b)-wm)%wp != 0) {
		err = fmt.Errorf("%d bytes is not a metric UID and whole tag pairs", len(b))
	}
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadTSUID, h, err)
	}
	return b, nil
}

// GetTSMeta returns the TSMeta of tsuid: ErrNoTSMeta when the series is
// not in the index and nothing is stored for it, ErrUnknownUID when one of
// its UIDs has no name.
func (s *Service) GetTSMeta(ctx context.Context, tsuid []byte) (*TSMeta, error) {
	if s.meta == nil {
		return nil, ErrNoTSMetaStore
	}
	m, err := s.meta.Get(ctx, tsuid)
	if err != nil {
		return nil, err
	}
	if _, ok := s.index.Lookup(tsuid); !ok && !m.Stored {
		return nil, ErrNoTSMeta
	}
	return s.withUIDMeta(ctx, m)
}

// withUIDMeta loads the UIDMeta of m's metric and tags.
func (s *Service) withUIDMeta(ctx context.Context, m tsmeta.Meta) (*TSMeta, error) {
	t := &TSMeta{Meta: m, TSUIDHex: strings.ToUpper(hex.EncodeToString(m.TSUID))}
	b := m.TSUID
	kind := uid.Metric
	for len(b) > 0 {
		id, rest, err := uid.ParseID(b, s.uids.Width(kind))
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrBadTSUID, t.TSUIDHex, err)
		}
		um, err := s.uids.GetMeta(ctx, kind, id)
		if errors.Is(err, uid.ErrNoSuchID) {
			return nil, fmt.Errorf("%w: %v", ErrUnknownUID, err)
		}
		if err != nil {
			return nil, err
		}
		if kind == uid.Metric {
			t.Metric = um
		} else {
			t.Tags = append(t.Tags, um)
		}
		b = rest
		if kind == uid.TagK {
			kind = uid.TagV
		} else {
			kind = uid.TagK
		}
	}
	return t, nil
}

// LookupTSUIDs returns the TSUIDs (raw bytes as strings) of every series
// a lookup finds, in TSUID order, without a limit (OpenTSDB's
// TSUIDQuery.getTSMetas for GET /api/uid/tsmeta?m=). The metric must be a
// name, as OpenTSDB resolves it: "*" is ErrUnknownName.
func (s *Service) LookupTSUIDs(ctx context.Context, q *Query) ([]string, error) {
	if s.meta == nil {
		return nil, ErrNoTSMetaStore
	}
	if wild(q.Metric) {
		return nil, fmt.Errorf("%w: no metric named %q", ErrUnknownName, q.Metric)
	}
	p, err := s.plan(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.selectTSUIDs(ctx, p)
}

// selectTSUIDs returns the TSUIDs p selects, in TSUID order.
func (s *Service) selectTSUIDs(ctx context.Context, p *plan) ([]string, error) {
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
	return tsuids, nil
}

// TSUIDOf returns the TSUID of a metric and exact tags (OpenTSDB's
// getTSUIDForMetric for POST ?m=): the metric UID then the tag pairs in
// tag-key UID order. A name without a UID is ErrUnknownName.
func (s *Service) TSUIDOf(ctx context.Context, q *Query) ([]byte, error) {
	if wild(q.Metric) {
		return nil, &ParseError{Message: "Missing metric"}
	}
	m, err := s.resolve(ctx, uid.Metric, q.Metric)
	if err != nil {
		return nil, err
	}
	type pair struct{ k, v uid.ID }
	var pairs []pair
	for _, t := range q.Tags {
		if t.Key == "" || t.Value == "" {
			return nil, &ParseError{Message: "Invalid tag: " + t.Key + "=" + t.Value}
		}
		k, err := s.resolve(ctx, uid.TagK, t.Key)
		if err != nil {
			return nil, err
		}
		v, err := s.resolve(ctx, uid.TagV, t.Value)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pair{k, v})
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
	pairs = slices.CompactFunc(pairs, func(a, b pair) bool { return a.k == b.k })
	b := s.uids.AppendID(nil, uid.Metric, m)
	for _, p := range pairs {
		b = s.uids.AppendID(b, uid.TagK, p.k)
		b = s.uids.AppendID(b, uid.TagV, p.v)
	}
	return b, nil
}

// TSMetaExists reports whether tsuid has a TSMeta: it is in the series
// index or has stored fields.
func (s *Service) TSMetaExists(ctx context.Context, tsuid []byte) (bool, error) {
	if s.meta == nil {
		return false, ErrNoTSMetaStore
	}
	if _, ok := s.index.Lookup(tsuid); ok {
		return true, nil
	}
	m, err := s.meta.Get(ctx, tsuid)
	return m.Stored, err
}

// checkUIDs reports ErrUnknownUID when a UID of tsuid has no name.
func (s *Service) checkUIDs(ctx context.Context, tsuid []byte) error {
	_, err := s.describe(ctx, string(tsuid))
	return err
}

// UpdateTSMeta applies upd to the TSMeta of tsuid (OpenTSDB's
// syncToStorage: POST merges, PUT overwrites) and returns the result.
// create stores the TSMeta first when none exists (create=true);
// otherwise a series without TSMeta is ErrNoTSMeta. An update that
// changes nothing is tsmeta.ErrNoChange.
func (s *Service) UpdateTSMeta(ctx context.Context, tsuid []byte, upd *tsmeta.Update, overwrite, create bool) (*TSMeta, error) {
	if s.meta == nil {
		return nil, ErrNoTSMetaStore
	}
	exists, err := s.TSMetaExists(ctx, tsuid)
	if err != nil {
		return nil, err
	}
	if err := s.checkUIDs(ctx, tsuid); err != nil {
		return nil, err
	}
	switch {
	case !exists && !create:
		return nil, ErrNoTSMeta
	case !exists:
		if _, err := s.meta.Create(ctx, tsuid, time.Now().Unix()); err != nil {
			return nil, err
		}
		if _, err := s.meta.Update(ctx, tsuid, upd, overwrite); err != nil && !errors.Is(err, tsmeta.ErrNoChange) {
			return nil, err
		}
	default:
		if _, err := s.meta.Update(ctx, tsuid, upd, overwrite); err != nil {
			return nil, err
		}
	}
	m, err := s.meta.Get(ctx, tsuid)
	if err != nil {
		return nil, err
	}
	return s.withUIDMeta(ctx, m)
}

// DeleteTSMeta removes the user's fields of tsuid.
func (s *Service) DeleteTSMeta(ctx context.Context, tsuid []byte) error {
	if s.meta == nil {
		return ErrNoTSMetaStore
	}
	return s.meta.Delete(ctx, tsuid)
}
