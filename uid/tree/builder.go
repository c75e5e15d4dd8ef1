package tree

import (
	"context"
	"regexp"
	"strconv"
	"strings"
)

// Name is a UID's name and the custom fields of its UIDMeta.
type Name struct {
	Name   string
	Custom map[string]string
}

// Tag is one tag pair of a series.
type Tag struct{ K, V Name }

// Meta is what the rules read of a series: its TSMeta with the UIDMeta of
// its metric and tags, as OpenTSDB's TreeBuilder sees it.
type Meta struct {
	TSUID  string // upper-case hex
	Metric Name
	Tags   []Tag // in TSUID order
}

// Result is what running a tree over one series made.
type Result struct {
	// Root is the root branch with the path the series took below it
	// (one child per level, the leaf on the deepest branch).
	Root *Branch
	// Messages are the builder's test messages (/api/tree/test).
	Messages []string
	// NotMatched holds the unmatched rules when a strict tree refused the
	// series; empty otherwise.
	NotMatched string
	// Collision is the TSUID a leaf of this series collided with while
	// building (two leaves of one branch with one name); empty when none.
	Collision string
	// top is the first branch below the root that the series reached.
	top *Branch
}

// builder is one run of a tree's rules over one series: a port of
// OpenTSDB's TreeBuilder.processRuleset and its parsers, message for
// message, since /api/tree/test answers the messages.
type builder struct {
	tree     *Tree
	levels   [][]*Rule // rules by level, index = level; nil levels skipped
	maxLevel int
	meta     *Meta
	res      *Result

	splits     []string
	ruleIdx    int
	splitIdx   int
	current    *Branch
	rule       *Rule
	notMatched string
	hasNM      bool
}

// Build runs t over m. It writes nothing: Store.Process stores what it
// makes.
func Build(t *Tree, m *Meta) *Result {
	b := &builder{tree: t, meta: m, res: &Result{}}
	for _, r := range t.Rules {
		for len(b.levels) <= r.Level {
			b.levels = append(b.levels, nil)
		}
		b.levels[r.Level] = append(b.levels[r.Level], r)
		b.maxLevel = max(b.maxLevel, r.Level)
	}
	root := newRoot(t.ID)
	b.res.Root = root
	b.processRuleset(root, 1)
	switch {
	case b.hasNM && b.notMatched != "" && t.StrictMatch:
		b.msg("TSUID failed to match one or more rule levels, will not add: " + m.TSUID)
		b.res.NotMatched = b.notMatched
	case b.current == nil:
	default:
		cb := b.current
		root.addChild(cb)
		b.res.top = cb
		path := root.Path
		for cb != nil {
			cb.setParentPath(path)
			if cb.Branches == nil {
				break
			}
			path = cb.Path
			cb = cb.Branches[0]
		}
	}
	return b.res
}

func (b *builder) msg(s string) { b.res.Messages = append(b.res.Messages, s) }

// processRuleset is TreeBuilder.processRuleset: it names a branch from the
// current level's rules, recurses into the next level (or the next part
// of a split), and on the way back adds the deepest named branch as a
// leaf of its parent and each other as a child of its parent. It reports
// whether the rules ran out below this call.
func (b *builder) processRuleset(parent *Branch, depth int) bool {
	if b.ruleIdx > b.maxLevel {
		return true
	}
	previous := b.current
	b.current = &Branch{TreeID: b.tree.ID}
	level := b.fetchRuleLevel()
	if level == nil {
		return true
	}
	for _, r := range level {
		b.rule = r
		b.msg("Processing rule: " + r.String())
		switch r.Type {
		case RuleMetric:
			b.processParsedValue(b.meta.Metric.Name)
		case RuleTagK:
			b.parseTagkRule()
		case RuleMetricCustom:
			b.parseMetricCustomRule()
		case RuleTagKCustom:
			b.parseTagCustomRule(true)
		case RuleTagVCustom:
			b.parseTagCustomRule(false)
		}
		if b.current.DisplayName != "" {
			break
		}
	}
	if b.current.DisplayName == "" {
		if !b.hasNM {
			b.notMatched, b.hasNM = b.rule.String(), true
		} else {
			b.notMatched += " " + b.rule.String()
		}
	}
	switch {
	case b.splits != nil && b.splitIdx >= len(b.splits):
		b.splits, b.splitIdx = nil, 0
		b.ruleIdx++
	case b.splits != nil:
	default:
		b.ruleIdx++
	}
	depth++
	complete := b.processRuleset(b.current, depth)
	if complete {
		if b.current == nil || b.current.DisplayName == "" {
			b.current = previous
			return true
		}
		if parent.DisplayName == "" {
			b.msg("Depth [" + strconv.Itoa(depth) + "] Parent branch was empty, rolling back")
			return true
		}
		leaf := &Leaf{DisplayName: b.current.DisplayName, TSUID: b.meta.TSUID}
		if _, with := parent.addLeaf(leaf); with != "" && b.res.Collision == "" {
			b.res.Collision = with
		}
		b.msg("Depth [" + strconv.Itoa(depth) + "] Adding leaf [name: " + leaf.DisplayName + " tsuid: " + leaf.TSUID +
			"] to parent branch [" + branchString(parent) + "]")
		b.current = previous
		return false
	}
	if (previous == nil || previous.DisplayName == "") && b.current.DisplayName != "" {
		if depth > 2 {
			b.msg("Depth [" + strconv.Itoa(depth) + "] Skipping a non-matched branch, returning: " + branchString(b.current))
		}
		return false
	}
	if b.current.DisplayName == "" {
		b.msg("Depth [" + strconv.Itoa(depth) + "] Branch was empty")
		b.current = previous
		return false
	}
	if b.current.DisplayName == previous.DisplayName {
		b.msg("Depth [" + strconv.Itoa(depth) + "] Current was the same as previous")
		return false
	}
	parent.addChild(b.current)
	b.msg("Depth [" + strconv.Itoa(depth) + "] Adding branch: " + branchString(b.current) +
		" to parent: " + branchString(parent))
	b.current = previous
	return false
}

// branchString is Branch.toString: the name alone while the branch has no
// path.
func branchString(br *Branch) string {
	if br.Path == nil {
		return "Name: [" + br.DisplayName + "]"
	}
	return "ID: [" + br.IDString() + "] Name: [" + br.DisplayName + "]"
}

// fetchRuleLevel returns the rules of the next level that has some.
func (b *builder) fetchRuleLevel() []*Rule {
	for b.ruleIdx <= b.maxLevel {
		if b.ruleIdx < len(b.levels) && b.levels[b.ruleIdx] != nil {
			return b.levels[b.ruleIdx]
		}
		b.ruleIdx++
	}
	return nil
}

func (b *builder) parseTagkRule() {
	r := b.rule
	for _, t := range b.meta.Tags {
		if t.K.Name == r.Field {
			if t.V.Name != "" {
				b.msg("Matched tagk [" + r.Field + "] for rule: " + r.String())
				b.processParsedValue(t.V.Name)
				return
			}
			break
		}
	}
	b.msg("No match on tagk [" + r.Field + "] for rule: " + r.String())
}

func (b *builder) parseMetricCustomRule() {
	r := b.rule
	if v, ok := b.meta.Metric.Custom[r.CustomField]; ok {
		b.processParsedValue(v)
		b.msg("Matched custom tag [" + r.CustomField + "] for rule: " + r.String())
		return
	}
	b.msg("No match on custom tag [" + r.CustomField + "] for rule: " + r.String())
}

// parseTagCustomRule reads a custom field of the tag key (tagk) or tag
// value named Field.
func (b *builder) parseTagCustomRule(tagk bool) {
	r := b.rule
	kind := "tagv"
	if tagk {
		kind = "tagk"
	}
	var found *Name
	for i := range b.meta.Tags {
		n := &b.meta.Tags[i].V
		if tagk {
			n = &b.meta.Tags[i].K
		}
		if n.Name == r.Field {
			found = n
			break
		}
	}
	if found == nil {
		b.msg("No match on " + kind + " [" + r.Field + "] for rule: " + r.String())
		return
	}
	b.msg("Matched " + kind + " [" + r.Field + "] for rule: " + r.String())
	if v, ok := found.Custom[r.CustomField]; ok {
		b.processParsedValue(v)
		b.msg("Matched custom tag [" + r.CustomField + "] for rule: " + r.String())
		return
	}
	b.msg("No match on custom tag [" + r.CustomField + "] for rule: " + r.String())
}

func (b *builder) processParsedValue(v string) {
	r := b.rule
	switch {
	case r.re == nil && r.Separator == "":
		b.setCurrentName(v, v)
	case r.re != nil:
		b.processRegexRule(v)
	default:
		b.processSplit(v)
	}
}

func (b *builder) processSplit(v string) {
	if b.splits == nil {
		if v == "" {
			// OpenTSDB throws here and the series goes no further.
			b.msg("Value was empty for rule: " + b.rule.String())
			return
		}
		re, err := regexp.Compile(b.rule.Separator)
		if err != nil {
			b.msg("Separator was invalid for rule: " + b.rule.String())
			return
		}
		b.splits = javaSplit(re, v)
		if len(b.splits) < 1 {
			b.msg("Separator did not match, created an empty list on rule: " + b.rule.String())
			b.splitIdx = 1
			return
		}
		b.splitIdx = 0
	}
	b.setCurrentName(v, b.splits[b.splitIdx])
	b.splitIdx++
}

// javaSplit is Java's String.split(regex): no leading empty part for a
// zero-width match at the start, trailing empty parts removed, the input
// itself when nothing matches.
func javaSplit(re *regexp.Regexp, s string) []string {
	locs := re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return []string{s}
	}
	var parts []string
	start := 0
	for _, l := range locs {
		if l[1] == 0 { // a zero-width match at the start
			continue
		}
		parts = append(parts, s[start:l[0]])
		start = l[1]
	}
	parts = append(parts, s[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (b *builder) processRegexRule(v string) {
	r := b.rule
	m := r.re.FindStringSubmatchIndex(v)
	if m == nil {
		return
	}
	groups := len(m)/2 - 1
	if groups < r.RegexGroupIdx+1 {
		b.msg("Regex group index [" + strconv.Itoa(r.RegexGroupIdx) + "] for rule " + r.String() +
			" was out of bounds [" + strconv.Itoa(groups) + "]")
		return
	}
	g := r.RegexGroupIdx + 1
	if m[2*g] < 0 || m[2*g] == m[2*g+1] {
		b.msg("Extracted value for rule " + r.String() + " was null or empty")
		return
	}
	b.setCurrentName(v, v[m[2*g]:m[2*g+1]])
}

func (b *builder) setCurrentName(original, extracted string) {
	r := b.rule
	format := r.DisplayFormat
	if format == "" {
		b.current.DisplayName = extracted
		return
	}
	format = strings.ReplaceAll(format, "{ovalue}", original)
	format = strings.ReplaceAll(format, "{value}", extracted)
	format = strings.ReplaceAll(format, "{tsuid}", b.meta.TSUID)
	if strings.Contains(format, "{tag_name}") {
		switch r.Type {
		case RuleTagK:
			format = strings.ReplaceAll(format, "{tag_name}", r.Field)
		case RuleMetricCustom, RuleTagKCustom, RuleTagVCustom:
			format = strings.ReplaceAll(format, "{tag_name}", r.CustomField)
		default:
			format = strings.ReplaceAll(format, "{tag_name}", "")
			b.msg("Display rule " + r.String() + " was of the wrong type to match on {tag_name}")
		}
	}
	b.current.DisplayName = format
}

// Process runs t over m and, unless t refuses it, stores its branches and
// leaf (TreeBuilder.processTimeseriesMeta): the root when missing, each
// branch on the series' path unless there, the leaf unless there. With
// t.StoreFailures, a collision and a strict tree's refusal are recorded.
func (s *Store) Process(ctx context.Context, t *Tree, m *Meta) (*Result, error) {
	res := Build(t, m)
	root := newRoot(t.ID)
	collisions := map[string]string{}
	if res.Collision != "" {
		collisions[m.TSUID] = res.Collision
	}
	if res.NotMatched != "" {
		if t.StoreFailures {
			return res, s.putFailures(ctx, t.ID, notMatchedRow, prefixNotMatched, map[string]string{m.TSUID: res.NotMatched})
		}
		return res, nil
	}
	if res.top == nil {
		return res, nil
	}
	if err := s.storeBranch(ctx, root, collisions); err != nil {
		return res, err
	}
	for cb := res.top; cb != nil; {
		if err := s.storeBranch(ctx, cb, collisions); err != nil {
			return res, err
		}
		if cb.Branches == nil {
			break
		}
		cb = cb.Branches[0]
	}
	if len(collisions) > 0 {
		if res.Collision == "" {
			res.Collision = collisions[m.TSUID]
		}
		if t.StoreFailures {
			return res, s.putFailures(ctx, t.ID, collisionRow, prefixCollision, collisions)
		}
	}
	return res, nil
}
