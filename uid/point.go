package uid

import (
	"bytes"
	"context"
	"fmt"
	"slices"
)

// Tag is one tag of a point as the parsers produce it: UTF-8 key and value.
type Tag struct {
	Key, Value []byte
}

func compareTagKeys(a, b Tag) int { return bytes.Compare(a.Key, b.Key) }

// ResolvePoint resolves a point's metric and tags, assigning UIDs to new
// names as Resolve does, in OpenTSDB's order: the metric first, then each
// tag key and its value in ascending tag-key order. It sorts tags in place
// by key and appends to dst the metric UID followed by each tag's key and
// value UIDs in that sorted order, each on its kind's width:
//
//	metric ‖ (tagk ‖ tagv)*
//
// The row key orders tag pairs by their UID bytes instead; that is package
// rowkey's business. A repeated tag key is ErrDuplicateTag (parsers drop
// exact duplicates first). When every name is cached it does not allocate.
// On error dst is returned with what was appended so far.
func (u *UIDs) ResolvePoint(ctx context.Context, dst, metric []byte, tags []Tag) ([]byte, error) {
	if err := SortTags(tags); err != nil {
		return dst, err
	}
	id, err := u.Resolve(ctx, Metric, metric)
	if err != nil {
		return dst, err
	}
	dst = AppendID(dst, id, u.kinds[Metric].width)
	for i := range tags {
		if id, err = u.Resolve(ctx, TagK, tags[i].Key); err != nil {
			return dst, err
		}
		dst = AppendID(dst, id, u.kinds[TagK].width)
		if id, err = u.Resolve(ctx, TagV, tags[i].Value); err != nil {
			return dst, err
		}
		dst = AppendID(dst, id, u.kinds[TagV].width)
	}
	return dst, nil
}

// SortTags sorts tags in place by key, as ResolvePoint does, and refuses a
// repeated key (ErrDuplicateTag).
func SortTags(tags []Tag) error {
	slices.SortFunc(tags, compareTagKeys)
	for i := 1; i < len(tags); i++ {
		if bytes.Equal(tags[i].Key, tags[i-1].Key) {
			return fmt.Errorf("%w %q", ErrDuplicateTag, tags[i].Key)
		}
	}
	return nil
}
