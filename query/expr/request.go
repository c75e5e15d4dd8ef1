package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/query/tsquery"
)

// Query is an /api/query/exp body (OpenTSDB's pojo.Query).
type Query struct {
	Time        Time         `json:"time"`
	Filters     []Filter     `json:"filters"`
	Metrics     []Metric     `json:"metrics"`
	Expressions []Expression `json:"expressions"`
	Outputs     []Output     `json:"outputs"`

	raw json.RawMessage // the body, echoed as "query"
}

// Time is the query's range and its common aggregation.
type Time struct {
	Start       string       `json:"start"`
	End         string       `json:"end"`
	Timezone    string       `json:"timezone"`
	Aggregator  string       `json:"aggregator"`
	Downsampler *Downsampler `json:"downsampler"`
	Rate        bool         `json:"rate"`
}

// Downsampler is the common downsampling of every metric.
type Downsampler struct {
	Interval   string      `json:"interval"`
	Aggregator string      `json:"aggregator"`
	FillPolicy *FillPolicy `json:"fillPolicy"`
}

// FillPolicy says what a missing value becomes: none, nan, null, zero or
// scalar (Value).
type FillPolicy struct {
	Policy string  `json:"policy"`
	Value  float64 `json:"value"`
}

// Filter is a named set of tag filters metrics refer to.
type Filter struct {
	ID   string           `json:"id"`
	Tags []tsquery.Filter `json:"tags"`
}

// Metric is one metric read, named by ID in expressions.
type Metric struct {
	ID         string      `json:"id"`
	Metric     string      `json:"metric"`
	Filter     string      `json:"filter"`
	Aggregator string      `json:"aggregator"`
	FillPolicy *FillPolicy `json:"fillPolicy"`
	TimeOffset string      `json:"timeOffset"`
}

// Expression computes series from metrics and other expressions.
type Expression struct {
	ID         string      `json:"id"`
	Expr       string      `json:"expr"`
	Join       *Join       `json:"join"`
	FillPolicy *FillPolicy `json:"fillPolicy"`

	tree node
}

// Join says how the series of an expression's variables are paired.
type Join struct {
	Operator       string `json:"operator"`
	UseQueryTags   bool   `json:"useQueryTags"`
	IncludeAggTags bool   `json:"includeAggTags"`
}

// Output names a metric or expression to return.
type Output struct {
	ID    string `json:"id"`
	Alias string `json:"alias"`
}

func bad(format string, args ...any) error {
	return &tsquery.Error{Msg: fmt.Sprintf(format, args...)}
}

// Parse reads and validates a body. Errors are *tsquery.Error with
// OpenTSDB's messages where it has one.
func Parse(body []byte) (*Query, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &tsquery.Error{Msg: "Missing message content",
			Details: "Supply valid JSON formatted data in the body of your request"}
	}
	var q Query
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, &tsquery.Error{Msg: "Unable to parse the given JSON", Details: err.Error(), Err: err}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, body) == nil {
		q.raw = buf.Bytes()
	}
	return &q, q.Validate()
}

// Validate checks the query as pojo.Query.validate does and parses the
// expressions.
func (q *Query) Validate() error {
	if err := q.Time.validate(); err != nil {
		return err
	}
	if len(q.Metrics) == 0 {
		return bad("missing or empty metrics")
	}
	vars := map[string]bool{}
	for _, m := range q.Metrics {
		if vars[m.ID] {
			return bad("duplicated metric id: %s", m.ID)
		}
		if err := validateID(m.ID); err != nil {
			return err
		}
		if m.Metric == "" {
			return bad("missing metric")
		}
		if _, err := parseOffset(m.TimeOffset); err != nil {
			return err
		}
		vars[m.ID] = true
	}
	if err := q.validateFilters(); err != nil {
		return err
	}
	return q.validateExpressions(vars)
}

func (t *Time) validate() error {
	switch {
	case t.Start == "":
		return bad("missing start time")
	case t.Aggregator == "":
		return bad("missing or empty aggregator")
	case t.Downsampler != nil && (t.Downsampler.Interval == "" || t.Downsampler.Aggregator == ""):
		return bad("missing downsampler interval or aggregator")
	}
	return nil
}

func (q *Query) validateFilters() error {
	ids := map[string]bool{}
	for _, f := range q.Filters {
		if f.ID == "" {
			return bad("missing filter id")
		}
		if ids[f.ID] {
			return bad("duplicated filter id: %s", f.ID)
		}
		ids[f.ID] = true
	}
	for _, m := range q.Metrics {
		if m.Filter != "" && !ids[m.Filter] {
			return bad("unrecognized filter id %s in metric %s", m.Filter, m.ID)
		}
	}
	return nil
}

func (q *Query) validateExpressions(vars map[string]bool) error {
	for i := range q.Expressions {
		e := &q.Expressions[i]
		if vars[e.ID] {
			return bad("Duplicated variable or expression id: %s", e.ID)
		}
		if err := validateID(e.ID); err != nil {
			return err
		}
		if e.Join != nil {
			if op := strings.ToLower(e.Join.Operator); op != "" && op != "union" && op != "intersection" {
				return bad("Unrecognized join operator: %s", e.Join.Operator)
			}
		}
		vars[e.ID] = true
	}
	for i := range q.Expressions {
		e := &q.Expressions[i]
		t, err := parseExpr(e.Expr)
		if err != nil {
			return err
		}
		for _, v := range t.variables(nil) {
			if !vars[v] {
				return bad("Expression [%s] was missing input %s", e.Expr, v)
			}
		}
		e.tree = t
	}
	for _, o := range q.Outputs {
		if !vars[o.ID] {
			return bad("Output id not found: %s", o.ID)
		}
	}
	return nil
}

// validateID accepts letters and digits only, not a lone digit.
func validateID(id string) error {
	if id == "" {
		return bad("The ID cannot be null or empty")
	}
	for _, c := range id {
		if !isLetter(c) && !isDigit(c) {
			return bad("Invalid id (\"%s\"): illegal character: %c", id, c)
		}
	}
	if len(id) == 1 && isDigit(rune(id[0])) {
		return bad("The ID cannot be an integer")
	}
	return nil
}

func isLetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c rune) bool  { return c >= '0' && c <= '9' }

// parseOffset reads a metric's timeOffset ("1h-ago" style or a duration
// such as "1h"; empty is none) into ms.
func parseOffset(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	d := strings.TrimSuffix(s, "-ago")
	i := strings.IndexFunc(d, func(r rune) bool { return !isDigit(r) })
	if i <= 0 {
		return 0, bad("Invalid time offset: %s", s)
	}
	n, err := strconv.ParseInt(d[:i], 10, 64)
	unit, ok := unitMs[d[i:]]
	if err != nil || !ok || n > 1<<40 {
		return 0, bad("Invalid time offset: %s", s)
	}
	return n * unit, nil
}

var unitMs = map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
	"w": 7 * 86_400_000, "n": 30 * 86_400_000, "y": 365 * 86_400_000}
