package lookup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultLimit is OpenTSDB's SearchQuery limit: the most series a lookup
// returns when the request names none.
const DefaultLimit = 25

// Pair is one tag of a lookup. An empty field was not given (OpenTSDB's
// null, echoed as null); an empty or "*" field is a wildcard.
type Pair struct {
	Key, Value string
}

// Query is a lookup.
type Query struct {
	// Metric is the metric name, "*" for every metric, or "" when none was
	// given (then Tags must not be empty).
	Metric string
	// Tags are the tag pairs, in request order.
	Tags []Pair
	// Limit is the most series returned; 0 or less is no limit, as in
	// OpenTSDB's TimeSeriesLookup. ParseM and ParseJSON set DefaultLimit
	// when the request names none.
	Limit int
}

// ParseError is a lookup that does not parse. Message is OpenTSDB's
// Tags.parseWithMetric text, e.g. "Missing '}' at the end of: m{a=b".
type ParseError struct {
	Message string
}

// Error returns the message.
func (e *ParseError) Error() string { return e.Message }

func parseErrorf(format string, args ...any) error {
	return &ParseError{Message: fmt.Sprintf(format, args...)}
}

// ParseM parses the m= parameter of a GET lookup: metric, metric{tags},
// or {tags}, where each tag is k=v, k= or =v (OpenTSDB's
// Tags.parseWithMetric into a list of pairs).
func ParseM(m string) (Query, error) {
	q := Query{Limit: DefaultLimit}
	curly := strings.IndexByte(m, '{')
	if curly < 0 {
		if m == "" {
			return q, parseErrorf("Metric string was empty")
		}
		q.Metric = m
		return q, nil
	}
	n := len(m)
	switch {
	case m[n-1] != '}':
		return q, parseErrorf("Missing '}' at the end of: %s", m)
	case curly == n-2:
		if curly == 0 {
			return q, parseErrorf("Missing metric and tags: %s", m)
		}
		q.Metric = m[:curly]
		return q, nil
	}
	for _, tag := range strings.Split(m[curly+1:n-1], ",") {
		p, err := parsePair(tag)
		if err != nil {
			return Query{}, parseErrorf("When parsing tag '%s': %s", tag, err.Error())
		}
		q.Tags = append(q.Tags, p)
	}
	q.Metric = m[:curly]
	return q, nil
}

// parsePair parses one k=v, k= or =v.
func parsePair(tag string) (Pair, error) {
	switch {
	case len(tag) < 2:
		return Pair{}, errors.New("Missing tag pair")
	case tag[0] == '=':
		return Pair{Value: tag[1:]}, nil
	case tag[len(tag)-1] == '=':
		return Pair{Key: tag[:len(tag)-1]}, nil
	}
	k, v, ok := strings.Cut(tag, "=")
	if !ok || k == "" || v == "" || strings.IndexByte(v, '=') >= 0 {
		return Pair{}, fmt.Errorf("invalid tag: %s", tag)
	}
	return Pair{Key: k, Value: v}, nil
}

// wireQuery is the JSON body of a POST lookup (OpenTSDB's SearchQuery).
type wireQuery struct {
	Metric *string `json:"metric"`
	Tags   []struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	} `json:"tags"`
	Limit json.RawMessage `json:"limit"`
}

// ParseJSON parses the body of a POST lookup:
// {"metric","tags":[{"key","value"}],"limit"}; other fields (useMeta,
// startIndex, query) are accepted and ignored. limit may be a number or a
// string holding one, as Jackson coerces.
func ParseJSON(body []byte) (Query, error) {
	var w wireQuery
	if err := json.Unmarshal(body, &w); err != nil {
		return Query{}, &ParseError{Message: err.Error()}
	}
	var q Query
	if w.Metric != nil {
		q.Metric = *w.Metric
	}
	for _, t := range w.Tags {
		var p Pair
		if t.Key != nil {
			p.Key = *t.Key
		}
		if t.Value != nil {
			p.Value = *t.Value
		}
		q.Tags = append(q.Tags, p)
	}
	var err error
	q.Limit, err = parseLimit(w.Limit)
	return q, err
}

// parseLimit reads a JSON number, a string holding one, or null/absent.
func parseLimit(raw json.RawMessage) (int, error) {
	s := string(bytes.Trim(bytes.TrimSpace(raw), `"`))
	if s == "" || s == "null" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, &ParseError{Message: "Unable to convert 'limit' to a valid number"}
	}
	return n, nil
}
