package last

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/query/tsquery"
)

// Query is one /api/query/last request (OpenTSDB's LastPointQuery).
type Query struct {
	// Queries are the sub-queries, at least one.
	Queries []SubQuery
	// ResolveNames adds each point's metric and tags.
	ResolveNames bool
	// BackScan is how many hours before the current one to search; 0
	// searches the hours the series index records for each series.
	BackScan int
}

// SubQuery selects series by TSUIDs, or else by metric and tags.
type SubQuery struct {
	// Metric is the metric name (when TSUIDs is empty).
	Metric string
	// Tags are exact tag values a series must have, in the order given,
	// each key once. Without a back_scan the series may have more tags;
	// with one, OpenTSDB reads only the series with exactly these tags,
	// and at least one is required.
	Tags []Tag
	// TSUIDs are hex TSUIDs; when present, Metric and Tags are ignored.
	TSUIDs []string
}

// Tag is one tag key and value.
type Tag struct{ Key, Value string }

func badRequest(msg string) error { return &tsquery.Error{Msg: msg} }

// ParseGET reads the query string: timeseries=<metric>{k=v,...}
// (repeatable), tsuids=<hex>,<hex>... (repeatable), resolve (present means
// true) and back_scan=<hours>.
func ParseGET(v url.Values) (*Query, error) {
	q := &Query{}
	if _, ok := v["resolve"]; ok {
		q.ResolveNames = true
	}
	if bs, ok := v["back_scan"]; ok && len(bs) > 0 {
		n, err := strconv.ParseInt(bs[0], 10, 32)
		if err != nil {
			return nil, badRequest("Unable to parse back_scan parameter")
		}
		q.BackScan = int(n)
	}
	for _, s := range v["timeseries"] {
		sq, err := ParseTimeSeries(s)
		if err != nil {
			return nil, err
		}
		q.Queries = append(q.Queries, sq)
	}
	for _, s := range v["tsuids"] {
		q.Queries = append(q.Queries, SubQuery{TSUIDs: strings.Split(s, ",")})
	}
	return q, q.Validate()
}

// ParseTimeSeries reads "metric" or "metric{k=v,...}" as OpenTSDB's
// Tags.parseWithMetric does, with its messages: a tag must be k=v with
// both sides non-empty, and a key given twice must repeat its value.
func ParseTimeSeries(s string) (SubQuery, error) {
	curly := strings.IndexByte(s, '{')
	if curly < 0 {
		return SubQuery{Metric: s}, nil
	}
	if !strings.HasSuffix(s, "}") || curly == len(s)-1 {
		return SubQuery{}, badRequest("Missing '}' at the end of: " + s)
	}
	sq := SubQuery{Metric: s[:curly]}
	inner := s[curly+1 : len(s)-1]
	if inner == "" {
		return sq, nil
	}
	for _, tag := range strings.Split(inner, ",") {
		if err := sq.addTag(tag); err != nil {
			return SubQuery{}, badRequest("When parsing tag '" + tag + "': " + err.Error())
		}
	}
	return sq, nil
}

type tagError string

func (e tagError) Error() string { return string(e) }

// addTag parses one k=v.
func (sq *SubQuery) addTag(tag string) error {
	kv := strings.Split(tag, "=")
	if len(kv) != 2 || kv[0] == "" || kv[1] == "" {
		return tagError("invalid tag: " + tag)
	}
	for _, t := range sq.Tags {
		if t.Key != kv[0] {
			continue
		}
		if t.Value == kv[1] {
			return nil
		}
		return tagError("duplicate tag: " + tag + ", tags=" + javaMap(sq.Tags))
	}
	sq.Tags = append(sq.Tags, Tag{Key: kv[0], Value: kv[1]})
	return nil
}

// javaMap formats tags as Java's HashMap.toString does ({k=v, k2=v2}),
// keys sorted for a stable message.
func javaMap(tags []Tag) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = t.Key + "=" + t.Value
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}

// wireQuery is the POST body as Jackson binds LastPointQuery.
type wireQuery struct {
	Queries []struct {
		Metric string            `json:"metric"`
		Tags   map[string]string `json:"tags"`
		TSUIDs []string          `json:"tsuids"`
	} `json:"queries"`
	ResolveNames bool `json:"resolveNames"`
	BackScan     int  `json:"backScan"`
}

// ParsePOST reads a JSON body {"queries":[{"metric","tags"} or
// {"tsuids":[...]}],"resolveNames":bool,"backScan":int}. Field names match
// case-insensitively and unknown fields are ignored.
func ParsePOST(body []byte) (*Query, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &tsquery.Error{Msg: "Missing message content",
			Details: "Supply valid JSON formatted data in the body of your request"}
	}
	var w wireQuery
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &tsquery.Error{Msg: "Unable to parse the given JSON", Details: err.Error(), Err: err}
	}
	q := &Query{ResolveNames: w.ResolveNames, BackScan: w.BackScan}
	for _, ws := range w.Queries {
		sq := SubQuery{Metric: ws.Metric, TSUIDs: ws.TSUIDs}
		for k, v := range ws.Tags {
			sq.Tags = append(sq.Tags, Tag{Key: k, Value: v})
		}
		sort.Slice(sq.Tags, func(i, j int) bool { return sq.Tags[i].Key < sq.Tags[j].Key })
		q.Queries = append(q.Queries, sq)
	}
	return q, q.Validate()
}

// Validate checks what OpenTSDB refuses before it reads anything.
func (q *Query) Validate() error {
	if len(q.Queries) == 0 {
		return badRequest("Missing sub queries")
	}
	if q.BackScan < 0 {
		return badRequest("Backscan must be zero or a positive number")
	}
	for i := range q.Queries {
		sq := &q.Queries[i]
		if len(sq.TSUIDs) == 0 && sq.Metric == "" {
			return badRequest("Metric cannot be null or empty")
		}
		for _, t := range sq.Tags {
			if t.Key == "" || t.Value == "" {
				return badRequest("invalid tag: " + t.Key + "=" + t.Value)
			}
		}
	}
	return nil
}
