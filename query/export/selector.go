package export

import (
	"context"
	"fmt"
	"strings"

	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// ParseSelector reads METRIC or METRIC{FILTERS} in the m= syntax of
// /api/query (host=web01, host=regexp(web.*), {}{...} group-by-less
// filters) and resolves its filters for Exporter.Metric. A literal_or
// naming an unknown tag value selects nothing for that value, as the
// index resolves literals.
func ParseSelector(ctx context.Context, u *uid.UIDs, spec string) (string, []index.Filter, error) {
	sq, err := tsquery.ParseM("none:" + spec)
	if err != nil {
		return "", nil, fmt.Errorf("%q: %w", spec, err)
	}
	var out []index.Filter
	for _, f := range sq.Filters {
		k, err := u.Lookup(ctx, uid.TagK, []byte(f.Tagk))
		if err != nil {
			return "", nil, fmt.Errorf("%q: tag key %q: %w", spec, f.Tagk, err)
		}
		typ, err := index.ParseFilterType(f.Type)
		if err != nil {
			return "", nil, fmt.Errorf("%q: %w", spec, err)
		}
		xf := index.Filter{TagK: k, Type: typ, Pattern: f.Filter}
		switch typ {
		case index.LiteralOr, index.ILiteralOr, index.NotLiteralOr, index.NotILiteralOr:
			xf.Values = strings.Split(f.Filter, "|")
		}
		if err := xf.Validate(); err != nil {
			return "", nil, fmt.Errorf("%q: %w", spec, err)
		}
		out = append(out, xf)
	}
	return sq.Metric, out, nil
}
