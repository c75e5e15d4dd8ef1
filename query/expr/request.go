package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/query/tsquery"
)

// Query is an /api/query/exp body (OpenTSDB's pojo.Query).
type Query struct {
	Time        *Time        `json:"time"`
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

// Validate checks the query as pojo.Query.validate does, in its order,
// and parses the expressions. A part's own check that fails is wrapped
// as OpenTSDB wraps it: the message names the part ("Invalid time",
// "Invalid metric at index 0"), the details give the part's message
// ("Missing or empty aggregator"), which OpenTSDB shows as the cause in
// its stack trace.
func (q *Query) Validate() error {
	if q.Time == nil {
		return bad("missing time")
	}
	if err := q.Time.validate(); err != nil {
		return invalid("Invalid time", err)
	}
	if len(q.Metrics) == 0 {
		return bad("missing or empty metrics")
	}
	vars := map[string]bool{}
	for _, m := range q.Metrics {
		if vars[m.ID] {
			return bad("duplicated metric id: %s", m.ID)
		}
		vars[m.ID] = true
	}
	if err := q.checkDuplicates(vars); err != nil {
		return err
	}
	if err := q.validateParts(); err != nil {
		return err
	}
	if err := q.validateFilters(); err != nil {
		return err
	}
	return q.validateExpressions(vars)
}

// invalid wraps a part's validation error as OpenTSDB's
// Validatable.validatePOJO and validateCollection do.
func invalid(msg string, cause error) error {
	e := &tsquery.Error{Msg: msg, Details: cause.Error(), Err: cause}
	if te, ok := cause.(*tsquery.Error); ok {
		e.Details = te.Msg
	}
	return e
}

// checkDuplicates refuses a repeated filter id, and an expression id
// that repeats a metric's or another expression's; it adds the
// expressions' ids to vars.
func (q *Query) checkDuplicates(vars map[string]bool) error {
	ids := map[string]bool{}
	for _, f := range q.Filters {
		if ids[f.ID] {
			return bad("duplicated filter id: %s", f.ID)
		}
		ids[f.ID] = true
	}
	for _, e := range q.Expressions {
		if vars[e.ID] {
			return bad("Duplicated variable or expression id: %s", e.ID)
		}
		vars[e.ID] = true
	}
	return nil
}

// validateParts runs each metric's, filter's and expression's own check.
func (q *Query) validateParts() error {
	for i := range q.Metrics {
		if err := q.Metrics[i].validate(); err != nil {
			return invalid(fmt.Sprintf("Invalid metric at index %d", i), err)
		}
	}
	for i := range q.Filters {
		if err := q.Filters[i].validate(); err != nil {
			return invalid(fmt.Sprintf("Invalid filter at index %d", i), err)
		}
	}
	for i := range q.Expressions {
		if err := q.Expressions[i].validate(); err != nil {
			return invalid(fmt.Sprintf("Invalid expression at index %d", i), err)
		}
	}
	return nil
}

func (t *Time) validate() error {
	if t.Start == "" {
		return bad("missing or empty start")
	}
	if ds := t.Downsampler; ds != nil {
		switch {
		case ds.Interval == "":
			return bad("Missing or empty interval")
		case ds.Aggregator == "":
			return bad("Missing or empty aggregator")
		case !knownAggregator(ds.Aggregator):
			return bad("Invalid aggregator")
		}
	}
	switch {
	case t.Aggregator == "":
		return bad("Missing or empty aggregator")
	case !knownAggregator(t.Aggregator):
		return bad("Invalid aggregator")
	}
	return nil
}

// knownAggregator looks name up as OpenTSDB's Aggregators.get(name
// lower-cased) does.
func knownAggregator(name string) bool {
	_, ok := agg.Lookup(strings.ToLower(name))
	return ok
}

func (m *Metric) validate() error {
	switch {
	case m.Metric == "":
		return bad("missing or empty metric")
	case m.ID == "":
		return bad("missing or empty id")
	}
	if err := validateID(m.ID); err != nil {
		return err
	}
	if _, err := parseOffset(m.TimeOffset); err != nil {
		return err
	}
	if m.Aggregator != "" && !knownAggregator(m.Aggregator) {
		return bad("Invalid aggregator")
	}
	return nil
}

func (f *Filter) validate() error {
	if f.ID == "" {
		return bad("Missing or empty id")
	}
	return validateID(f.ID)
}

func (e *Expression) validate() error {
	if e.ID == "" {
		return bad("missing or empty id")
	}
	if err := validateID(e.ID); err != nil {
		return err
	}
	if e.Expr == "" {
		return bad("missing or empty expr")
	}
	if e.Join != nil {
		if op := strings.ToLower(e.Join.Operator); op != "" && op != "union" && op != "intersection" {
			return bad("Unrecognized join operator: %s", e.Join.Operator)
		}
	}
	return nil
}

// validateFilters refuses a metric naming a filter id no filter has.
func (q *Query) validateFilters() error {
	ids := map[string]bool{}
	for _, f := range q.Filters {
		ids[f.ID] = true
	}
	for _, m := range q.Metrics {
		if m.Filter != "" && !ids[m.Filter] {
			return bad("unrecognized filter id %s in metric %s", m.Filter, m.ID)
		}
	}
	return nil
}

// validateExpressions parses every expression (tsd's grammar: a parse
// error is its own message, as OpenTSDB's JEXL exception is not wrapped)
// and checks their inputs and the outputs.
func (q *Query) validateExpressions(vars map[string]bool) error {
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

// validateID accepts letters and digits only (Java's
// Character.isLetterOrDigit), not a lone digit.
func validateID(id string) error {
	if id == "" {
		return bad("The ID cannot be null or empty")
	}
	for _, c := range id {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
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
