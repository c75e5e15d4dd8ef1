package tree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// Errors callers branch on; test with errors.Is.
var (
	// ErrNotFound: no such tree, rule or branch.
	ErrNotFound = errors.New("tree: not found")
	// ErrNoChange: an edit changes nothing (OpenTSDB answers 304).
	ErrNoChange = errors.New("tree: no changes")
	// ErrInvalid: a request OpenTSDB refuses with 400; the text after
	// "tree: invalid: " is OpenTSDB's message.
	ErrInvalid = errors.New("tree: invalid")
)

// MaxID is the highest tree id: ids are 2 bytes.
const MaxID = 65535

// Tree is a tree's definition and its rules.
type Tree struct {
	ID            int
	Name          string
	Description   string
	Notes         string
	StrictMatch   bool
	Enabled       bool
	StoreFailures bool
	Created       int64 // Unix seconds
	// Rules are sorted by level, then order; nil when the tree has none.
	Rules []*Rule
}

// Rule returns the rule at level and order, or nil.
func (t *Tree) Rule(level, order int) *Rule {
	for _, r := range t.Rules {
		if r.Level == level && r.Order == order {
			return r
		}
	}
	return nil
}

// addRule adds or replaces a rule, keeping Rules sorted.
func (t *Tree) addRule(r *Rule) {
	i, found := slices.BinarySearchFunc(t.Rules, r, cmpRule)
	if found {
		t.Rules[i] = r
		return
	}
	t.Rules = slices.Insert(t.Rules, i, r)
}

func cmpRule(a, b *Rule) int {
	if a.Level != b.Level {
		return a.Level - b.Level
	}
	return a.Order - b.Order
}

// appendStorageJSON appends the tree column's value (Tree.toStorageJson).
func (t *Tree) appendStorageJSON(dst []byte) []byte {
	m := jsonw.Jackson
	dst = append(dst, `{"name":`...)
	dst = m.AppendString(dst, t.Name)
	dst = append(dst, `,"description":`...)
	dst = m.AppendString(dst, t.Description)
	dst = append(dst, `,"notes":`...)
	dst = m.AppendString(dst, t.Notes)
	dst = append(dst, `,"strictMatch":`...)
	dst = strconv.AppendBool(dst, t.StrictMatch)
	dst = append(dst, `,"created":`...)
	dst = strconv.AppendInt(dst, t.Created, 10)
	dst = append(dst, `,"enabled":`...)
	dst = strconv.AppendBool(dst, t.Enabled)
	dst = append(dst, `,"storeFailures":`...)
	dst = strconv.AppendBool(dst, t.StoreFailures)
	return append(dst, '}')
}

// AppendJSON appends the tree as OpenTSDB's /api/tree answers it, rules
// as {"level":{"order":rule}} (null when there are none).
func (t *Tree) AppendJSON(dst []byte) []byte {
	m := jsonw.Jackson
	dst = append(dst, `{"name":`...)
	dst = m.AppendString(dst, t.Name)
	dst = append(dst, `,"description":`...)
	dst = m.AppendString(dst, t.Description)
	dst = append(dst, `,"notes":`...)
	dst = m.AppendString(dst, t.Notes)
	dst = append(dst, `,"rules":`...)
	dst = t.appendRules(dst)
	dst = append(dst, `,"created":`...)
	dst = strconv.AppendInt(dst, t.Created, 10)
	dst = append(dst, `,"treeId":`...)
	dst = strconv.AppendInt(dst, int64(t.ID), 10)
	dst = append(dst, `,"strictMatch":`...)
	dst = strconv.AppendBool(dst, t.StrictMatch)
	dst = append(dst, `,"storeFailures":`...)
	dst = strconv.AppendBool(dst, t.StoreFailures)
	dst = append(dst, `,"enabled":`...)
	dst = strconv.AppendBool(dst, t.Enabled)
	return append(dst, '}')
}

func (t *Tree) appendRules(dst []byte) []byte {
	if t.Rules == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, r := range t.Rules {
		if i == 0 || t.Rules[i-1].Level != r.Level {
			if i > 0 {
				dst = append(dst, "},"...)
			}
			dst = append(dst, '"')
			dst = strconv.AppendInt(dst, int64(r.Level), 10)
			dst = append(dst, `":{`...)
		} else {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(r.Order), 10)
		dst = append(dst, `":`...)
		dst = r.AppendJSON(dst)
	}
	if len(t.Rules) > 0 {
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// decodeStoredTree reads the tree column's JSON into t (Tree.fetchTree).
func decodeStoredTree(t *Tree, raw []byte) error {
	var v struct {
		Name          string `json:"name"`
		Description   string `json:"description"`
		Notes         string `json:"notes"`
		StrictMatch   bool   `json:"strictMatch"`
		Created       int64  `json:"created"`
		Enabled       bool   `json:"enabled"`
		StoreFailures bool   `json:"storeFailures"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	t.Name, t.Description, t.Notes = v.Name, v.Description, v.Notes
	t.StrictMatch, t.Created, t.Enabled, t.StoreFailures = v.StrictMatch, v.Created, v.Enabled, v.StoreFailures
	return nil
}

// TreeEdit is a tree as a request gives it. A string field counts as
// changed when it is set and not empty, a flag whenever it is set: what
// OpenTSDB's setters record.
type TreeEdit struct {
	ID                                 int
	Name, Description, Notes           *string
	StrictMatch, Enabled, StoreFailure *bool
}

// changes reports whether the edit changes any field.
func (e *TreeEdit) changes() bool {
	s := func(p *string) bool { return p != nil && *p != "" }
	return s(e.Name) || s(e.Description) || s(e.Notes) || e.StrictMatch != nil || e.Enabled != nil || e.StoreFailure != nil
}

// apply copies the edit onto t (Tree.copyChanges): every field when
// overwrite, else the changed ones.
func (e *TreeEdit) apply(t *Tree, overwrite bool) {
	str := func(dst *string, p *string) {
		switch {
		case p != nil && (*p != "" || overwrite):
			*dst = *p
		case overwrite:
			*dst = ""
		}
	}
	flag := func(dst *bool, p *bool) {
		switch {
		case p != nil:
			*dst = *p
		case overwrite:
			*dst = false
		}
	}
	str(&t.Name, e.Name)
	str(&t.Description, e.Description)
	str(&t.Notes, e.Notes)
	flag(&t.StrictMatch, e.StrictMatch)
	flag(&t.Enabled, e.Enabled)
	flag(&t.StoreFailures, e.StoreFailure)
}

// Set sets one field by name as OpenTSDB's parsers read it (query
// parameters and the body's keys, lower-cased: treeid, name, description,
// notes, strict_match or strictmatch, enabled, store_failures or
// storefailures); a flag is true only for "true" in any case. Other names
// are ignored.
func (e *TreeEdit) Set(name, v string) error {
	p := func() *string { return &v }
	b := func() *bool { x := strings.EqualFold(v, "true"); return &x }
	switch strings.ToLower(name) {
	case "treeid":
		id, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: Unable to parse 'tree' value", ErrInvalid)
		}
		e.ID = id
	case "name":
		e.Name = p()
	case "description":
		e.Description = p()
	case "notes":
		e.Notes = p()
	case "strict_match", "strictmatch":
		e.StrictMatch = b()
	case "enabled":
		e.Enabled = b()
	case "store_failures", "storefailures":
		e.StoreFailure = b()
	}
	return nil
}

// ParseScalarMap reads a JSON object whose values are read as strings, as
// Jackson reads a HashMap<String,String>: numbers and booleans as their
// text, null left out; a nested object or list is an error.
func ParseScalarMap(raw []byte) (map[string]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			out[k] = s
		case v[0] == '{' || v[0] == '[':
			return nil, fmt.Errorf("field %q is not a string", k)
		default:
			out[k] = string(v)
		}
	}
	return out, nil
}

// ParseTreeJSON reads /api/tree's body (HttpJsonSerializer.parseTreeV1).
func ParseTreeJSON(raw []byte) (TreeEdit, map[string]string, error) {
	var e TreeEdit
	m, err := ParseScalarMap(raw)
	if err != nil {
		return e, nil, fmt.Errorf("%w: Unable to parse the given JSON", ErrInvalid)
	}
	for k, v := range m {
		if err := e.Set(k, v); err != nil {
			return e, nil, err
		}
	}
	return e, m, nil
}

// ParseRuleJSON reads one rule as Jackson reads a TreeRule: the keys
// type, field, customField, regex, separator, description, notes,
// regexGroupIdx, displayFormat, level, order and treeId, others ignored.
func ParseRuleJSON(raw []byte) (*RuleEdit, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: Unable to parse the given JSON: %v", ErrInvalid, err)
	}
	return ruleFromMap(m)
}

// ParseRulesJSON reads a list of rules (/api/tree/rules).
func ParseRulesJSON(raw []byte) ([]*RuleEdit, error) {
	var l []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("%w: Unable to parse the given JSON: %v", ErrInvalid, err)
	}
	out := make([]*RuleEdit, 0, len(l))
	for _, m := range l {
		e, err := ruleFromMap(m)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func ruleFromMap(m map[string]json.RawMessage) (*RuleEdit, error) {
	e := &RuleEdit{}
	for k, raw := range m {
		raw = bytes.TrimSpace(raw)
		if string(raw) == "null" {
			continue
		}
		var s string
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("%w: Unable to parse the given JSON: %v", ErrInvalid, err)
			}
		} else if raw[0] != '{' && raw[0] != '[' {
			s = string(raw)
		} else {
			return nil, fmt.Errorf("%w: Unable to parse the given JSON: field %q is not a scalar", ErrInvalid, k)
		}
		if err := e.setJSON(k, s); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *RuleEdit) setJSON(k, s string) error {
	num := func(dst *int) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%w: Unable to parse the given JSON: %s is not a number: %q", ErrInvalid, k, s)
		}
		*dst = n
		return nil
	}
	switch k {
	case "type":
		t, err := ParseRuleType(s)
		if err != nil {
			return fmt.Errorf("%w: Unable to parse the given JSON: %v", ErrInvalid, err)
		}
		e.Type = t
		e.Mark("type", true)
	case "field", "customField", "separator", "description", "notes", "displayFormat":
		return e.SetString(k, s)
	case "regex":
		if err := e.SetString(k, s); err != nil {
			return fmt.Errorf("%w: Unable to parse the given JSON: %v", ErrInvalid, err)
		}
	case "regexGroupIdx":
		if err := num(&e.RegexGroupIdx); err != nil {
			return err
		}
		e.Mark(k, e.RegexGroupIdx != 0)
	case "level":
		if err := num(&e.Level); err != nil {
			return err
		}
		if e.Level < 0 {
			return fmt.Errorf("%w: Negative levels are not allowed", ErrInvalid)
		}
		e.Mark(k, e.Level != 0)
	case "order":
		if err := num(&e.Order); err != nil {
			return err
		}
		e.Mark(k, e.Order != 0)
	case "treeId":
		return num(&e.TreeID)
	}
	return nil
}

// decodeStoredRule reads a tree_rule column.
func decodeStoredRule(raw []byte) (*Rule, error) {
	e, err := ParseRuleJSON(raw)
	if err != nil {
		return nil, err
	}
	r := e.Rule
	return &r, nil
}
