package gexp

import (
	"context"
	"maps"
	"net/url"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/uid"
)

// Run answers a /api/query/gexp query string: /api/query's parameters
// plus exp= expressions, whose metric sub-queries follow the m= ones.
// The Result's groups are the expressions' series; release it with
// Release once written.
func Run(ctx context.Context, e *opentsdb.Engine, v url.Values) (*opentsdb.Result, error) {
	if len(v["start"]) == 0 || v.Get("start") == "" {
		return nil, &tsquery.Error{Msg: "Missing parameter <code>start</code>"}
	}
	trees, metrics, err := Parse(v["exp"], nil)
	if err != nil {
		return nil, err
	}
	v = maps.Clone(v)
	v["m"] = append(append([]string(nil), v["m"]...), metrics...)
	q, err := tsquery.ParseGET(v)
	if err != nil {
		return nil, err
	}
	q.Queries = tsquery.Dedupe(q.Queries)
	res, err := e.Execute(ctx, q)
	if err != nil {
		return nil, err
	}
	results := make([][]opentsdb.Group, len(q.Queries))
	for _, g := range res.Groups {
		results[g.Sub.Index] = append(results[g.Sub.Index], g)
	}
	ids := uidNames{ctx: ctx, u: e.Options().UIDs}
	var sub0 *tsquery.SubQuery
	if len(q.Queries) > 0 {
		sub0 = q.Queries[0]
	}
	var out []opentsdb.Group
	for _, t := range trees {
		gs, err := t.Evaluate(results, ids, sub0)
		if err != nil {
			res.Release()
			return nil, err
		}
		out = append(out, gs...)
	}
	res.Groups = append(res.Groups[:0], out...)
	return res, nil
}

// uidNames looks names up in the UID table (its cache first).
type uidNames struct {
	ctx context.Context
	u   *uid.UIDs
}

func (n uidNames) ID(kind uid.Kind, name string) (uint64, bool, error) {
	id, ok, err := n.u.Find(n.ctx, kind, []byte(name))
	return uint64(id), ok, err
}
