package tsquery

import (
	"regexp"
	"slices"
	"strings"
)

// Filter is a tag-value filter of a sub-query (OpenTSDB's TagVFilter), as
// POSTed: {"type","tagk","filter","groupBy"}.
type Filter struct {
	// Type is one of FilterTypes' names.
	Type string `json:"type"`
	// Tagk is the tag key the filter applies to.
	Tagk string `json:"tagk"`
	// Filter is the expression, e.g. "web01|web02" or "web*".
	Filter string `json:"filter"`
	// GroupBy groups the results by this tag key's values.
	GroupBy bool `json:"groupBy"`
}

// Filter type names.
const (
	LiteralOr     = "literal_or"
	ILiteralOr    = "iliteral_or"
	NotLiteralOr  = "not_literal_or"
	NotILiteralOr = "not_iliteral_or"
	Wildcard      = "wildcard"
	IWildcard     = "iwildcard"
	Regexp        = "regexp"
	NotKey        = "not_key"
)

// FilterType describes a filter for /api/config/filters.
type FilterType struct {
	Name        string
	Description string
	Examples    string
}

// filterTypes are OpenTSDB 2.4's built-in filters with their own
// description and examples texts.
var filterTypes = []FilterType{
	{LiteralOr, "Accepts one or more exact values and matches if the series contains any of them. " +
		"Multiple values can be included and must be seperated by the | (pipe) character. The filter " +
		"is case sensitive and will not allow characters that TSDB does not allow at write time.",
		`host=literal_or(web01),  host=literal_or(web01|web02|web03)  {"type":"literal_or","tagk":"host","filter":"web01|web02|web03","groupBy":false}`},
	{ILiteralOr, "Accepts one or more exact values and matches if the series contains any of them. " +
		"Multiple values can be included and must be seperated by the | (pipe) character. The filter " +
		"is case insensitive and will not allow characters that TSDB does not allow at write time.",
		`host=iliteral_or(web01),  host=iliteral_or(web01|web02|web03)  {"type":"iliteral_or","tagk":"host","filter":"web01|web02|web03","groupBy":false}`},
	{NotLiteralOr, "Accepts one or more exact values and matches if the series does NOT contain any of " +
		"them. Multiple values can be included and must be seperated by the | (pipe) character. The " +
		"filter is case sensitive and will not allow characters that TSDB does not allow at write time.",
		`host=not_literal_or(web01),  host=not_literal_or(web01|web02|web03)  {"type":"not_literal_or","tagk":"host","filter":"web01|web02|web03","groupBy":false}`},
	{NotILiteralOr, "Accepts one or more exact values and matches if the series does NOT contain any of " +
		"them. Multiple values can be included and must be seperated by the | (pipe) character. The " +
		"filter is case insensitive and will not allow characters that TSDB does not allow at write time.",
		`host=not_iliteral_or(web01),  host=not_iliteral_or(web01|web02|web03)  {"type":"not_iliteral_or","tagk":"host","filter":"web01|web02|web03","groupBy":false}`},
	{Wildcard, "Performs pre, post and in-fix glob matching of values. The globs are case sensitive and " +
		"multiple wildcards can be used. The wildcard character is the * (asterisk). At least one " +
		"wildcard must be present in the filter value. A wildcard by itself can be used as well to " +
		"match on any value for the tag key.",
		`host=wildcard(web*),  host=wildcard(web*.tsdb.net)  {"type":"wildcard","tagk":"host","filter":"web*.tsdb.net","groupBy":false}`},
	{IWildcard, "Performs pre, post and in-fix glob matching of values. The globs are case insensitive " +
		"and multiple wildcards can be used. The wildcard character is the * (asterisk). Case " +
		"insensitivity is achieved by dropping all values to lower case. At least one wildcard must be " +
		"present in the filter value. A wildcard by itself can be used as well to match on any value " +
		"for the tag key.",
		`host=iwildcard(web*),  host=iwildcard(web*.tsdb.net)  {"type":"iwildcard","tagk":"host","filter":"web*.tsdb.net","groupBy":false}`},
	{Regexp, "Provides full, POSIX compliant regular expression using the built in Java Pattern class. " +
		"Note that an expression containing curly braces {} will not parse properly in URLs. If the " +
		"pattern is not a valid regular expression then an exception will be raised.",
		`host=regexp(.*)  {"type":"regexp","tagk":"host","filter":".*","groupBy":false}`},
	{NotKey, "Skips any time series with the given tag key, regardless of the value. This can be " +
		"useful for situations where a metric has inconsistent tag sets. NOTE: The filter value must " +
		"be null or an empty string.",
		`host=not_key()  {"type":"not_key","tagk":"host","filter":"","groupBy":false}`},
}

// FilterTypes returns the filters /api/config/filters lists, by name.
func FilterTypes() []FilterType {
	out := slices.Clone(filterTypes)
	slices.SortFunc(out, func(a, b FilterType) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// NewFilter builds and validates a filter (TagVFilter.Builder.build): the
// type must be a built-in one (case-sensitive), the tag key non-empty, and
// the expression valid for the type.
func NewFilter(typ, tagk, expr string, groupBy bool) (Filter, error) {
	switch {
	case typ == "":
		return Filter{}, badRequest("The filter type cannot be null or empty")
	case tagk == "":
		return Filter{}, badRequest("The tagk cannot be null or empty")
	}
	f := Filter{Type: typ, Tagk: tagk, Filter: expr, GroupBy: groupBy}
	if err := f.Validate(); err != nil {
		return Filter{}, err
	}
	return f, nil
}

// Validate checks the filter as its OpenTSDB constructor does.
func (f Filter) Validate() error {
	if f.Tagk == "" {
		return badRequest("Filter must have a tagk")
	}
	switch f.Type {
	case LiteralOr, ILiteralOr:
		if f.Filter == "|" {
			return badRequest("Filter must contain more than just a pipe")
		}
		return nonEmpty(f.Filter)
	case NotLiteralOr, NotILiteralOr:
		return nonEmpty(f.Filter)
	case Wildcard, IWildcard:
		if err := nonEmpty(f.Filter); err != nil {
			return err
		}
		if !strings.Contains(f.Filter, "*") {
			return badRequest("Filter must contain an asterisk")
		}
	case Regexp:
		if err := nonEmpty(f.Filter); err != nil {
			return err
		}
		if _, err := regexp.Compile(f.Filter); err != nil {
			return &Error{Msg: err.Error(), Err: err}
		}
	case NotKey:
		if f.Filter != "" {
			return badRequest("The filter must be empty for the not_key filter")
		}
	default:
		return badRequest("Could not find a tag value filter of the type: " + f.Type)
	}
	return nil
}

func nonEmpty(expr string) error {
	if expr == "" {
		return badRequest("Filter cannot be null or empty")
	}
	return nil
}

// shorthandFilter turns k=v of an m= query or a POSTed "tags" map into a
// filter (TagVFilter.getFilter and mapToFilters): "*" is wildcard(*), a
// value with a '(' is type(expr), one with a '*' a case-insensitive
// wildcard, anything else literal_or.
func shorthandFilter(tagk, v string, groupBy bool) (Filter, error) {
	switch {
	case tagk == "":
		return Filter{}, badRequest("Tagk cannot be null or empty")
	case v == "":
		return Filter{}, badRequest("Filter cannot be null or empty")
	case v == "*":
		return Filter{Type: Wildcard, Tagk: tagk, Filter: "*", GroupBy: groupBy}, nil
	}
	if paren := strings.IndexByte(v, '('); paren >= 0 {
		if v[len(v)-1] != ')' {
			return Filter{}, badRequest("Filter must end with a ')': " + v)
		}
		return NewFilter(strings.ToLower(v[:paren]), tagk, v[paren+1:len(v)-1], groupBy)
	}
	typ := LiteralOr
	if strings.Contains(v, "*") {
		typ = IWildcard
	}
	f := Filter{Type: typ, Tagk: tagk, Filter: v, GroupBy: groupBy}
	return f, f.Validate()
}

// equivalent reports whether two filters select the same series
// (TagVFilter.equals: the type, the tag key and the expression, ignoring
// groupBy; literal lists compare as sets).
func (f Filter) equivalent(g Filter) bool {
	return f.Type == g.Type && f.Tagk == g.Tagk && f.canonical() == g.canonical()
}

// canonical is the expression in a form equal filters share.
func (f Filter) canonical() string {
	switch f.Type {
	case LiteralOr, ILiteralOr, NotLiteralOr, NotILiteralOr:
		lits := literals(f)
		slices.Sort(lits)
		return strings.Join(slices.Compact(lits), "|")
	}
	return f.Filter
}

// literals splits a literal filter on '|' as Java's split does (trailing
// empty values dropped), lower-casing for the case-insensitive types.
func literals(f Filter) []string {
	expr := f.Filter
	if f.Type == ILiteralOr || f.Type == NotILiteralOr {
		expr = strings.ToLower(expr)
	}
	parts := strings.Split(expr, "|")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}
