package tree

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// RuleType is what a rule reads from a series' Meta.
type RuleType uint8

// The rule types of OpenTSDB's TreeRule.TreeRuleType.
const (
	// RuleNone is an unset type, invalid in a stored rule.
	RuleNone RuleType = iota
	// RuleMetric reads the metric name.
	RuleMetric
	// RuleMetricCustom reads a custom field of the metric's UIDMeta.
	RuleMetricCustom
	// RuleTagK reads the value of the tag whose key is Field.
	RuleTagK
	// RuleTagKCustom reads a custom field of the tag key named Field.
	RuleTagKCustom
	// RuleTagVCustom reads a custom field of the tag value named Field.
	RuleTagVCustom
)

var ruleTypeNames = [...]string{"null", "METRIC", "METRIC_CUSTOM", "TAGK", "TAGK_CUSTOM", "TAGV_CUSTOM"}

// String is the type as OpenTSDB writes it (METRIC ...), "null" for none.
func (t RuleType) String() string {
	if int(t) < len(ruleTypeNames) {
		return ruleTypeNames[t]
	}
	return "null"
}

// ParseRuleType reads a type name in any case (TreeRule.stringToType).
func ParseRuleType(s string) (RuleType, error) {
	if s == "" {
		return RuleNone, errors.New("Rule type was empty")
	}
	for i, n := range ruleTypeNames[1:] {
		if strings.EqualFold(s, n) {
			return RuleType(i + 1), nil
		}
	}
	return RuleNone, errors.New("Unrecognized rule type")
}

// Rule is one rule of a tree, at a level (a depth of the hierarchy) and an
// order (rules of one level are tried in order until one matches).
type Rule struct {
	Type          RuleType
	Field         string // a tag key or tag value name, for the tag rules
	CustomField   string // the custom key, for the *_CUSTOM rules
	Regex         string // a pattern whose group RegexGroupIdx+1 names the branch
	Separator     string // a pattern splitting the value into one branch per part
	Description   string
	Notes         string
	RegexGroupIdx int
	DisplayFormat string // {ovalue}, {value}, {tag_name}, {tsuid} are replaced
	Level, Order  int
	TreeID        int

	re *regexp.Regexp
}

// String is OpenTSDB's [tree:level:order:TYPE], which messages quote.
func (r *Rule) String() string {
	return "[" + strconv.Itoa(r.TreeID) + ":" + strconv.Itoa(r.Level) + ":" + strconv.Itoa(r.Order) + ":" + r.Type.String() + "]"
}

// compile compiles Regex (setRegex).
func (r *Rule) compile() error {
	r.re = nil
	if r.Regex == "" {
		return nil
	}
	re, err := regexp.Compile(r.Regex)
	if err != nil {
		return err
	}
	r.re = re
	return nil
}

// validate is TreeRule.validateRule.
func (r *Rule) validate() error {
	switch r.Type {
	case RuleMetric:
	case RuleMetricCustom, RuleTagKCustom, RuleTagVCustom:
		if r.Field == "" {
			return fmt.Errorf("%w: Missing field name required for %s rule", ErrInvalid, r.Type)
		}
		if r.CustomField == "" {
			return fmt.Errorf("%w: Missing custom field name required for %s rule", ErrInvalid, r.Type)
		}
	case RuleTagK:
		if r.Field == "" {
			return fmt.Errorf("%w: Missing field name required for %s rule", ErrInvalid, r.Type)
		}
	case RuleNone:
		return fmt.Errorf("%w: Missing rule type", ErrInvalid)
	default:
		return fmt.Errorf("%w: Invalid rule type", ErrInvalid)
	}
	if r.RegexGroupIdx < 0 {
		return fmt.Errorf("%w: Invalid regex group index. Cannot be less than 0", ErrInvalid)
	}
	return nil
}

// AppendJSON appends the rule as OpenTSDB serialises a TreeRule, in the
// column and in answers alike.
func (r *Rule) AppendJSON(dst []byte) []byte {
	m := jsonw.Jackson
	dst = append(dst, `{"type":`...)
	if r.Type == RuleNone {
		dst = append(dst, "null"...)
	} else {
		dst = m.AppendString(dst, r.Type.String())
	}
	dst = append(dst, `,"field":`...)
	dst = m.AppendString(dst, r.Field)
	dst = append(dst, `,"regex":`...)
	dst = m.AppendString(dst, r.Regex)
	dst = append(dst, `,"separator":`...)
	dst = m.AppendString(dst, r.Separator)
	dst = append(dst, `,"description":`...)
	dst = m.AppendString(dst, r.Description)
	dst = append(dst, `,"notes":`...)
	dst = m.AppendString(dst, r.Notes)
	dst = append(dst, `,"level":`...)
	dst = strconv.AppendInt(dst, int64(r.Level), 10)
	dst = append(dst, `,"order":`...)
	dst = strconv.AppendInt(dst, int64(r.Order), 10)
	dst = append(dst, `,"treeId":`...)
	dst = strconv.AppendInt(dst, int64(r.TreeID), 10)
	dst = append(dst, `,"customField":`...)
	dst = m.AppendString(dst, r.CustomField)
	dst = append(dst, `,"regexGroupIdx":`...)
	dst = strconv.AppendInt(dst, int64(r.RegexGroupIdx), 10)
	dst = append(dst, `,"displayFormat":`...)
	dst = m.AppendString(dst, r.DisplayFormat)
	return append(dst, '}')
}

// RuleEdit is a rule as a request gives it: each field with whether the
// request set it to something other than its default, which is what
// OpenTSDB's setters record as a change.
type RuleEdit struct {
	Rule
	// Set holds the changed fields, by their JSON names.
	Set map[string]bool
}

// Mark records field as changed when changed is true.
func (e *RuleEdit) Mark(field string, changed bool) {
	if !changed {
		return
	}
	if e.Set == nil {
		e.Set = map[string]bool{}
	}
	e.Set[field] = true
}

// SetString sets one string field by its JSON name (query-string and body
// names alike) and marks it when it is not empty.
func (e *RuleEdit) SetString(field, v string) error {
	r := &e.Rule
	switch field {
	case "field":
		r.Field = v
	case "customField":
		r.CustomField = v
	case "regex":
		r.Regex = v
		if err := r.compile(); err != nil {
			return err
		}
	case "separator":
		r.Separator = v
	case "description":
		r.Description = v
	case "notes":
		r.Notes = v
	case "displayFormat":
		r.DisplayFormat = v
	default:
		return fmt.Errorf("tree: no string field %q", field)
	}
	e.Mark(field, v != "")
	return nil
}

// copyChanges is TreeRule.copyChanges: every field when overwrite, else
// the set fields that differ; it reports whether anything was copied.
func (r *Rule) copyChanges(e *RuleEdit, overwrite bool) bool {
	changed := false
	str := func(name string, dst *string, v string) {
		if overwrite || (e.Set[name] && *dst != v) {
			*dst, changed = v, true
		}
	}
	if overwrite || (e.Set["type"] && r.Type != e.Type) {
		r.Type, changed = e.Type, true
	}
	str("field", &r.Field, e.Field)
	str("customField", &r.CustomField, e.CustomField)
	if overwrite || (e.Set["regex"] && r.Regex != e.Regex) {
		r.Regex, r.re, changed = e.Regex, e.re, true
	}
	str("separator", &r.Separator, e.Separator)
	str("description", &r.Description, e.Description)
	str("notes", &r.Notes, e.Notes)
	if overwrite || (e.Set["regexGroupIdx"] && r.RegexGroupIdx != e.RegexGroupIdx) {
		r.RegexGroupIdx, changed = e.RegexGroupIdx, true
	}
	str("displayFormat", &r.DisplayFormat, e.DisplayFormat)
	return changed
}
