package opentsdb

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/uid"
)

// tagPair is one tag of a series as UIDs.
type tagPair struct{ k, v uid.ID }

// parseTags appends the tag pairs of tsuid, in TSUID (ascending tag key)
// order.
func (x *executor) parseTags(dst []tagPair, tsuid string) []tagPair {
	w := x.e.opts.Reader.Layout().Widths
	if len(tsuid) < w.Metric {
		return dst
	}
	for b := tsuid[w.Metric:]; len(b) >= w.TagK+w.TagV; b = b[w.TagK+w.TagV:] {
		dst = append(dst, tagPair{stringID(b, w.TagK), stringID(b[w.TagK:], w.TagV)})
	}
	return dst
}

// stringID reads a big-endian UID of width bytes from the front of s, as
// uid.ParseID does, without converting s to bytes.
func stringID(s string, width int) uid.ID {
	var id uid.ID
	for i := range width {
		id = id<<8 | uid.ID(s[i])
	}
	return id
}

// group sorts x.members into groups: by the UIDs of the group-by tag
// values (ascending tag key), or by TSUID for the none aggregator. It sets
// x.keys in output order, the bytes of the value UIDs compared as
// OpenTSDB's byte-keyed map does. Each group lists its members in TSUID
// order, the order OpenTSDB's spans are kept in (a map by row key, salt
// and base time left out): first, last and diff take their values in
// this order, so their answer is a function of the data, not of the
// order the read delivered the series in.
func (x *executor) group(sel *selection, none bool) {
	if x.byKey == nil {
		x.byKey = map[string][]int{}
	}
	clear(x.byKey)
	x.keys = x.keys[:0]
	var key []byte
	x.tagSlab = x.tagSlab[:0]
	for i := range x.members {
		m := &x.members[i]
		// One slab for every member's tags: members are cleared between
		// queries, the slab is kept.
		at := len(x.tagSlab)
		x.tagSlab = x.parseTags(x.tagSlab, m.s.TSUID)
		m.tags = x.tagSlab[at:len(x.tagSlab):len(x.tagSlab)]
		var ok bool
		if key, ok = x.groupKey(key[:0], m, sel.groupBy, none); !ok {
			continue // lacks a group-by tag
		}
		if _, seen := x.byKey[string(key)]; !seen {
			x.keys = append(x.keys, string(key))
		}
		x.byKey[string(key)] = append(x.byKey[string(key)], i)
	}
	slices.Sort(x.keys)
	byTSUID := func(a, b int) int { return strings.Compare(x.members[a].s.TSUID, x.members[b].s.TSUID) }
	for _, idx := range x.byKey {
		if !slices.IsSortedFunc(idx, byTSUID) {
			slices.SortFunc(idx, byTSUID)
		}
	}
}

// groupKey appends m's group key: fixed-width big-endian value UIDs, so
// byte order is UID order.
func (x *executor) groupKey(dst []byte, m *member, groupBy []uid.ID, none bool) ([]byte, bool) {
	if none {
		return append(dst, m.s.TSUID...), true
	}
	width := x.e.opts.Reader.Layout().Widths.TagV
	for _, k := range groupBy {
		j := slices.IndexFunc(m.tags, func(t tagPair) bool { return t.k == k })
		if j < 0 {
			return dst, false
		}
		dst = uid.AppendID(dst, m.tags[j].v, width)
	}
	return dst, true
}

// describe names group g's metric tags as OpenTSDB's
// SpanGroup.computeTags does: a tag key whose members never disagree on
// its value is a tag of the group, even when some members lack the key;
// a key with two values among the members is aggregated (aggregateTags,
// in tag key UID order). It also gathers the sorted TSUIDs and the
// members' notes; a member read only for its notes adds just those.
func (x *executor) describe(ctx context.Context, g int, idx []int, res *Result) error {
	grp := &res.Groups[g]
	common, keys := x.common[:0], x.tagKeys[:0]
	defer func() { x.common, x.tagKeys = common[:0], keys[:0] }()
	for _, i := range idx {
		m := &x.members[i]
		grp.Notes = x.decodeNotes(grp.Notes, m.notes)
		if !m.points {
			continue
		}
		common, keys = agreeTags(common, keys, m.tags)
		if res.q.ShowTSUIDs {
			grp.TSUIDs = append(grp.TSUIDs, string(rowkey.AppendTSUIDHex(nil, []byte(m.s.TSUID))))
		}
	}
	slices.SortStableFunc(grp.Notes, func(a, b annotation.Annotation) int { return cmp.Compare(a.StartMs(), b.StartMs()) })
	slices.Sort(grp.TSUIDs)
	slices.Sort(keys)
	at := len(res.names)
	for _, k := range keys {
		name, err := x.e.opts.UIDs.Name(ctx, uid.TagK, k)
		if err != nil {
			return badName(err)
		}
		res.names = append(res.names, name)
	}
	if n := len(res.names) - at; n > 0 {
		grp.AggregateTags = res.names[at:len(res.names):len(res.names)]
	}
	return x.nameTags(ctx, res, grp, common)
}

// agreeTags folds one member's tags into the group's agreed tags and
// aggregated keys: a new key joins the agreed tags, a known key with
// another value moves to the aggregated keys for good.
func agreeTags(common []tagPair, aggregated []uid.ID, tags []tagPair) ([]tagPair, []uid.ID) {
	for _, t := range tags {
		if slices.Contains(aggregated, t.k) {
			continue
		}
		j := slices.IndexFunc(common, func(c tagPair) bool { return c.k == t.k })
		switch {
		case j < 0:
			common = append(common, t)
		case common[j].v != t.v:
			common = slices.Delete(common, j, j+1)
			aggregated = append(aggregated, t.k)
		}
	}
	return common, aggregated
}

// decodeNotes appends the decoded annotation cells of a series; a cell
// that does not decode is logged and skipped.
func (x *executor) decodeNotes(dst []annotation.Annotation, notes []read.Note) []annotation.Annotation {
	for _, n := range notes {
		a, err := annotation.Decode(n.Value)
		if err != nil {
			x.e.opts.Logger.Warn("skipping an annotation that does not decode", "t", n.T, "err", err)
			continue
		}
		dst = append(dst, a)
	}
	return dst
}

// nameTags resolves the common tags into grp.Tags, sorted by name.
func (x *executor) nameTags(ctx context.Context, res *Result, grp *Group, common []tagPair) error {
	at := len(res.tags)
	defer func() {
		if len(res.tags) > at {
			grp.Tags = res.tags[at:len(res.tags):len(res.tags)]
			slices.SortFunc(grp.Tags, func(a, b Tag) int { return strings.Compare(a.Key, b.Key) })
		}
	}()
	for _, t := range common {
		k, err := x.e.opts.UIDs.Name(ctx, uid.TagK, t.k)
		if err != nil {
			return badName(err)
		}
		v, err := x.e.opts.UIDs.Name(ctx, uid.TagV, t.v)
		if err != nil {
			return badName(err)
		}
		res.tags = append(res.tags, Tag{Key: k, Value: v})
	}
	return nil
}
