package tsquery

import "net/url"

// ParseGET builds a query from /api/query's query string
// (QueryRpc.parseQuery): start (required), end, timezone, the flags padding,
// no_annotations, global_annotations, show_tsuids, ms, show_query,
// show_stats, show_summary and use_calendar (present means true, whatever
// the value: ?show_query=false still shows it), then every tsuid= and every
// m= sub-query in order. The result still needs Validate.
func ParseGET(v url.Values) (*TSQuery, error) {
	q := &TSQuery{Start: last(v, "start"), End: last(v, "end"), Timezone: last(v, "timezone")}
	if q.Start == "" {
		return nil, badRequest("Missing parameter <code>start</code>")
	}
	for name, flag := range map[string]*bool{
		"padding": &q.Padding, "no_annotations": &q.NoAnnotations, "global_annotations": &q.GlobalAnnotations,
		"show_tsuids": &q.ShowTSUIDs, "ms": &q.MsResolution, "show_query": &q.ShowQuery,
		"show_stats": &q.ShowStats, "show_summary": &q.ShowSummary, "use_calendar": &q.UseCalendar,
	} {
		_, *flag = v[name]
	}
	for _, s := range v["tsuid"] {
		sq, err := ParseTSUIDQuery(s)
		if err != nil {
			return nil, err
		}
		q.Queries = append(q.Queries, sq)
	}
	for _, s := range v["m"] {
		sq, err := ParseM(s)
		if err != nil {
			return nil, err
		}
		q.Queries = append(q.Queries, sq)
	}
	if len(q.Queries) == 0 {
		return nil, badRequest("Missing sub queries")
	}
	return q, nil
}

// last returns the last value of a parameter (HttpQuery.getQueryStringParam).
func last(v url.Values, name string) string {
	if vs := v[name]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return ""
}
