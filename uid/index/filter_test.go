package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/uid"
)

// fixture is a set of series with their names, registered in an Index.
type fixture struct {
	s      *store
	ix     *Index
	series []fixSeries
}

type fixSeries struct {
	id     SeriesID
	metric string
	tags   map[string]string
}

var (
	fixHosts = []string{"web01", "web02", "Web03", "db01.lga", "db02.sjc", "webdb", "w1", "cache-01", "éclair"}
	fixDCs   = []string{"lga", "sjc", "LGA"}
	fixEnvs  = []string{"prod", "dev", ""}
)

// newFixture registers every combination of metric, host, dc and env
// (env absent when ""), and a few series without tags or with only host.
func newFixture(t testing.TB) *fixture {
	f := &fixture{s: openMemStore(t)}
	f.ix = f.s.open(t, nil)
	for _, m := range []string{"cpu", "mem"} {
		for _, h := range fixHosts {
			for _, dc := range fixDCs {
				for _, env := range fixEnvs {
					tags := map[string]string{"host": h, "dc": dc}
					if env != "" {
						tags["env"] = env
					}
					f.add(t, m, tags)
				}
			}
			f.add(t, m, map[string]string{"host": h})
		}
		f.add(t, m, map[string]string{})
	}
	return f
}

func (f *fixture) add(t testing.TB, metric string, tags map[string]string) {
	var kv []string
	for k, v := range tags {
		kv = append(kv, k+"="+v)
	}
	id := mustRegister(t, f.ix, f.s.tsuid(t, metric, kv...), 0, 0)
	f.series = append(f.series, fixSeries{id: id, metric: metric, tags: tags})
}

// globRegexp turns a wildcard into a regular expression, an
// implementation independent of the index's, with OpenTSDB's anchoring
// (TagVWildcardFilter): "a*" is anchored at the start, "*a" at the end,
// "a*b" and "*a*" at neither.
func globRegexp(p string, fold bool) *regexp.Regexp {
	lead, trail := strings.HasPrefix(p, "*"), strings.HasSuffix(p, "*")
	parts := strings.Split(strings.Trim(p, "*"), "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	expr := strings.Join(parts, ".*")
	if trail && !lead {
		expr = "^" + expr
	}
	if lead && !trail {
		expr += "$"
	}
	if fold {
		expr = "(?i)" + expr
	}
	return regexp.MustCompile(expr)
}

// want evaluates a filter on one series by its names.
func want(tags map[string]string, key string, fl Filter) bool {
	v, ok := tags[key]
	in := func(fold bool) bool {
		for _, l := range fl.Values {
			if l == v || (fold && strings.ToLower(l) == strings.ToLower(v)) {
				return true
			}
		}
		return false
	}
	switch fl.Type {
	case LiteralOr:
		return ok && in(false)
	case ILiteralOr:
		return ok && in(true)
	case NotLiteralOr:
		return !ok || !in(false)
	case NotILiteralOr:
		return !ok || !in(true)
	case Wildcard, IWildcard:
		return ok && globRegexp(fl.Pattern, fl.Type == IWildcard).MatchString(v)
	case Regexp:
		return ok && regexp.MustCompile(fl.Pattern).MatchString(v)
	case NotKey:
		return !ok
	case Equal:
		return v == fl.Pattern
	case NotEqual:
		return v != fl.Pattern
	case RegexMatch:
		return regexp.MustCompile("^(?:" + fl.Pattern + ")$").MatchString(v)
	case RegexNoMatch:
		return !regexp.MustCompile("^(?:" + fl.Pattern + ")$").MatchString(v)
	}
	panic("unknown filter")
}

// namedFilter is a filter on a tag key given by name.
type namedFilter struct {
	key string
	f   Filter
}

func (f *fixture) check(t *testing.T, metric string, nfs []namedFilter) {
	t.Helper()
	var fs []Filter
	for _, nf := range nfs {
		fl := nf.f
		fl.TagK = f.key(t, nf.key)
		fs = append(fs, fl)
	}
	var m uid.ID
	if metric != "" {
		m = f.s.assign(t, uid.Metric, metric)
	}
	got, err := f.ix.Postings(context.Background(), m, fs)
	if err != nil {
		t.Fatalf("%v: %v", nfs, err)
	}
	exp := roaring.New()
	for _, s := range f.series {
		ok := metric == "" || s.metric == metric
		for _, nf := range nfs {
			tags := s.tags
			if nf.key == "" {
				tags = map[string]string{"": s.metric}
			}
			ok = ok && want(tags, nf.key, nf.f)
		}
		if ok {
			exp.Add(s.id)
		}
	}
	if !got.Equals(exp) {
		t.Errorf("metric %q filters %v:\n got %v\nwant %v", metric, nfs, got, exp)
	}
}

// key returns the UID of a tag key, NameKey for "".
func (f *fixture) key(t testing.TB, name string) uid.ID {
	if name == "" {
		return NameKey
	}
	return f.s.assign(t, uid.TagK, name)
}

func TestFilterTypes(t *testing.T) {
	f := newFixture(t)
	lit := func(typ FilterType, vals ...string) Filter { return Filter{Type: typ, Values: vals} }
	pat := func(typ FilterType, p string) Filter { return Filter{Type: typ, Pattern: p} }
	cases := []namedFilter{
		{"host", lit(LiteralOr, "web01", "db02.sjc", "nosuchvalue")},
		{"host", lit(LiteralOr, "WEB01")},
		{"host", lit(ILiteralOr, "WEB01", "web03")},
		{"env", lit(NotLiteralOr, "prod")},
		{"env", lit(NotILiteralOr, "PROD", "Dev")},
		{"host", pat(Wildcard, "web*")},
		{"host", pat(Wildcard, "*01")},
		{"host", pat(Wildcard, "*eb*")},
		{"host", pat(Wildcard, "w*1")},
		{"host", pat(Wildcard, "w*b*1")},
		{"host", pat(Wildcard, "db*.*")},
		{"host", pat(Wildcard, "web*web")},
		{"env", pat(Wildcard, "*")},
		{"env", pat(Wildcard, "**")},
		{"host", pat(IWildcard, "WEB*")},
		{"dc", pat(IWildcard, "*GA")},
		{"host", pat(Regexp, "eb0[12]")},
		{"host", pat(Regexp, "^db")},
		{"host", pat(Regexp, "é")},
		{"env", Filter{Type: NotKey}},
		{"nosuchkey", Filter{Type: NotKey}},
		{"nosuchkey", lit(LiteralOr, "x")},
		{"nosuchkey", lit(NotLiteralOr, "x")},
		{"host", pat(Equal, "web01")},
		{"env", pat(Equal, "")},
		{"env", pat(NotEqual, "prod")},
		{"env", pat(NotEqual, "")},
		{"host", pat(RegexMatch, "web.*")},
		{"host", pat(RegexMatch, "eb0.")},
		{"env", pat(RegexMatch, "prod|")},
		{"env", pat(RegexMatch, ".*")},
		{"env", pat(RegexMatch, ".+")},
		{"host", pat(RegexMatch, "web01")},
		{"host", pat(RegexNoMatch, "web.*")},
		{"env", pat(RegexNoMatch, "|dev")},
		{"", pat(RegexMatch, "c.*")},
		// Expressions that are sets of names (setmatch.go).
		{"host", pat(RegexMatch, `(web01|db02\.sjc|nosuchvalue)`)},
		{"host", pat(RegexMatch, "web0[13]")},
		{"host", pat(RegexNoMatch, "web01|web03")},
		{"env", pat(RegexNoMatch, "(prod|)")},
		{"", pat(RegexMatch, "cpu|mem")},
		{"", lit(LiteralOr, "mem")},
		{"", pat(Wildcard, "*e*")},
	}
	for _, nf := range cases {
		for _, m := range []string{"cpu", ""} {
			t.Run(fmt.Sprintf("%s/%s/%s%s/%s", nf.key, nf.f.Type, nf.f.Pattern, strings.Join(nf.f.Values, "|"), m), func(t *testing.T) {
				f.check(t, m, []namedFilter{nf})
			})
		}
	}
	// Random conjunctions of two and three filters.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 60 {
		n := 2 + rng.IntN(2)
		var nfs []namedFilter
		for range n {
			nfs = append(nfs, cases[rng.IntN(len(cases))])
		}
		f.check(t, "mem", nfs)
	}
}

func TestExplicitTags(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	host, dc := f.key(t, "host"), f.key(t, "dc")
	for _, keys := range [][]string{{"host", "dc"}, {"host"}, {}, {"host", "host"}, {"host", "nosuchkey"}} {
		b, err := f.ix.Postings(ctx, f.s.assign(t, uid.Metric, "cpu"), []Filter{{TagK: host, Type: Wildcard, Pattern: "web*"}})
		if err != nil {
			t.Fatal(err)
		}
		var ks []uid.ID
		for _, k := range keys {
			ks = append(ks, f.key(t, k))
		}
		f.ix.ExplicitTags(b, ks)
		exp := roaring.New()
		for _, s := range f.series {
			names := make([]string, 0, len(s.tags))
			for k := range s.tags {
				names = append(names, k)
			}
			slices.Sort(names)
			ok := s.metric == "cpu" && strings.HasPrefix(s.tags["host"], "web") && slices.Equal(names, slices.Compact(slices.Sorted(slices.Values(keys))))
			if ok {
				exp.Add(s.id)
			}
		}
		if !b.Equals(exp) {
			t.Errorf("explicit %v: got %v, want %v", keys, b, exp)
		}
	}
	_ = dc
}

func TestTagKeysAndValues(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	env := f.key(t, "env")
	b, err := f.ix.Postings(ctx, NameKey, []Filter{{TagK: env, Type: LiteralOr, Values: []string{"prod"}}})
	if err != nil {
		t.Fatal(err)
	}
	keys := f.ix.TagKeys(b)
	wantKeys := []uid.ID{f.key(t, "host"), f.key(t, "dc"), env}
	slices.Sort(wantKeys)
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("TagKeys = %v, want %v", keys, wantKeys)
	}
	vals := f.ix.TagValues(f.key(t, "dc"), b)
	var wantVals []uid.ID
	for _, dc := range fixDCs {
		wantVals = append(wantVals, f.s.assign(t, uid.TagV, dc))
	}
	slices.Sort(wantVals)
	if !slices.Equal(vals, wantVals) {
		t.Fatalf("TagValues(dc) = %v, want %v", vals, wantVals)
	}
	if got := f.ix.TagValues(f.key(t, "env"), nil); len(got) != 2 {
		t.Fatalf("TagValues(env) over everything = %v, want prod and dev", got)
	}
	metrics := f.ix.TagValues(NameKey, nil)
	if len(metrics) != 2 {
		t.Fatalf("metrics = %v, want cpu and mem", metrics)
	}
	if got := f.ix.TagKeys(roaring.New()); len(got) != 0 {
		t.Fatalf("TagKeys of nothing = %v", got)
	}
}

func TestBadFilters(t *testing.T) {
	f := newFixture(t)
	for _, fl := range []Filter{
		{Type: Wildcard, Pattern: "web"},
		{Type: Regexp, Pattern: "(["},
		{Type: RegexMatch, Pattern: "a(?"},
		{Type: 0},
		{Type: 200},
	} {
		_, err := f.ix.Postings(context.Background(), NameKey, []Filter{{TagK: 1, Type: NotKey}, fl})
		var fe *FilterError
		if !errors.Is(err, ErrBadFilter) || !errors.As(err, &fe) || fe.Index != 1 {
			t.Errorf("%+v: err %v, want a FilterError at index 1", fl, err)
		}
		if fl.Validate() == nil {
			t.Errorf("%+v: Validate accepted it", fl)
		}
	}
	for _, name := range []string{"literal_or", "iliteral_or", "not_literal_or", "not_iliteral_or", "wildcard", "iwildcard", "regexp", "not_key", "=", "!=", "=~", "!~"} {
		typ, err := ParseFilterType(name)
		if err != nil || typ.String() != name {
			t.Errorf("ParseFilterType(%q) = %v, %v", name, typ, err)
		}
	}
	if _, err := ParseFilterType("regex"); !errors.Is(err, ErrBadFilter) {
		t.Errorf("unknown filter name: err %v", err)
	}
}

func TestRestrictTime(t *testing.T) {
	s := openMemStore(t)
	ix := s.open(t, nil)
	ctx := context.Background()
	a := mustRegister(t, ix, s.tsuid(t, "m", "h=a"), 10*hourMs, 12*hourMs)
	b := mustRegister(t, ix, s.tsuid(t, "m", "h=b"), 20*hourMs, 20*hourMs+59*60_000)
	if err := ix.RegisterSeries(s.tsuid(t, "m", "h=c")); err != nil {
		t.Fatal(err)
	}
	c, _ := ix.Lookup(s.tsuid(t, "m", "h=c"))
	for _, tc := range []struct {
		start, end int64
		want       []uint32
	}{
		{0, 9*hourMs + 1, []uint32{c}},
		{12*hourMs + 3_599_999, 13 * hourMs, []uint32{a, c}},
		{13 * hourMs, 19*hourMs + 3_599_999, []uint32{c}},
		{11 * hourMs, 20 * hourMs, []uint32{a, b, c}},
		{21 * hourMs, 30 * hourMs, []uint32{c}},
	} {
		bm, err := ix.Postings(ctx, s.assign(t, uid.Metric, "m"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ix.RestrictTime(bm, tc.start, tc.end)
		if !bm.Equals(roaring.BitmapOf(tc.want...)) {
			t.Errorf("[%d, %d]: got %v, want %v", tc.start, tc.end, bm, tc.want)
		}
	}
}

// TestDropCachesSeesRenames: names cached for matching follow a rename
// once DropCaches is called.
func TestDropCachesSeesRenames(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	ix := s.open(t, nil)
	id := mustRegister(t, ix, s.tsuid(t, "m", "host=web01"), 0, 0)
	host := s.assign(t, uid.TagK, "host")
	count := func(p string) uint64 {
		b, err := ix.Postings(ctx, NameKey, []Filter{{TagK: host, Type: Wildcard, Pattern: p}})
		if err != nil {
			t.Fatal(err)
		}
		return b.GetCardinality()
	}
	if count("web*") != 1 {
		t.Fatal("web* does not match web01")
	}
	if err := s.uids.Rename(ctx, uid.TagV, "web01", "db01"); err != nil {
		t.Fatal(err)
	}
	ix.DropCaches()
	if count("web*") != 0 || count("db*") != 1 {
		t.Fatalf("after rename and DropCaches: web* %d, db* %d; want 0 and 1", count("web*"), count("db*"))
	}
	_ = id
}

// TestGlobAnchoring: OpenTSDB's TagVWildcardFilter anchors a pattern at
// the start only when it ends with '*' (and does not start with one), at
// the end only when it starts with '*' (and does not end with one), and
// otherwise at neither end: "web*01" matches "xweb01x".
func TestGlobAnchoring(t *testing.T) {
	vals := []string{"web01", "xweb01", "web01x", "xweb01x", "WEB01"}
	for _, c := range []struct {
		pattern string
		fold    bool
		want    []bool // per vals
	}{
		{"web*", false, []bool{true, false, true, false, false}},
		{"*01", false, []bool{true, true, false, false, true}},
		{"*eb*", false, []bool{true, true, true, true, false}},
		{"web*01", false, []bool{true, true, true, true, false}},
		{"w*b*1", false, []bool{true, true, true, true, false}},
		{"01*web", false, []bool{false, false, false, false, false}},
		{"web*", true, []bool{true, false, true, false, true}},
		{"*", false, []bool{true, true, true, true, true}},
	} {
		g := newGlob(c.pattern, c.fold)
		for i, v := range vals {
			if got := g.match(v); got != c.want[i] {
				t.Errorf("glob %q (fold %v) on %q = %v, want %v", c.pattern, c.fold, v, got, c.want[i])
			}
			if got := globRegexp(c.pattern, c.fold).MatchString(v); c.pattern != "*" && got != c.want[i] {
				t.Errorf("reference %q (fold %v) on %q = %v, want %v", c.pattern, c.fold, v, got, c.want[i])
			}
		}
	}
}

// TestPromPatternCache: a =~ expression compiles once and then comes from
// the cache, the same for =~ and !~; an invalid one is refused every time
// and not kept; the cache stays within its bound.
func TestPromPatternCache(t *testing.T) {
	const pat = "cached_a|cached_b"
	for _, typ := range []FilterType{RegexMatch, RegexNoMatch, RegexMatch} {
		f := &Filter{Type: typ, Pattern: pat}
		c, err := compile(0, f)
		if err != nil || c.neg != (typ == RegexNoMatch) || len(c.literals) != 2 || c.literals[0] != "cached_a" {
			t.Fatalf("%v %q: %+v, %v", typ, pat, c, err)
		}
		if _, ok := promCache.get(pat); !ok {
			t.Fatalf("%q not cached after compiling", pat)
		}
	}
	for range 2 {
		if _, err := compile(0, &Filter{Type: RegexMatch, Pattern: "(unclosed"}); err == nil {
			t.Fatal("an invalid expression compiled")
		}
	}
	if _, ok := promCache.get("(unclosed"); ok {
		t.Fatal("an invalid expression was cached")
	}
	for i := range promCacheSize + 10 {
		if _, err := compile(0, &Filter{Type: RegexMatch, Pattern: fmt.Sprintf("v%d.*", i)}); err != nil {
			t.Fatal(err)
		}
	}
	promCache.mu.Lock()
	n := len(promCache.m)
	promCache.mu.Unlock()
	if n > promCacheSize {
		t.Fatalf("%d patterns cached, bound %d", n, promCacheSize)
	}
}

// TestPostingsCacheSeesNewSeries: Postings keeps its answers, and a series
// added afterwards, by this index or by another one sharing the meta table
// (seen at a refresh), is in the next answer to the same filters; a
// filter's answer is the caller's to modify.
func TestPostingsCacheSeesNewSeries(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	ix, other := s.open(t, manual()), s.open(t, manual())
	mustRegister(t, ix, s.tsuid(t, "m", "host=web01"), 0, 0)
	metric, host := s.assign(t, uid.Metric, "m"), s.assign(t, uid.TagK, "host")
	s.assign(t, uid.TagV, "web02")
	s.assign(t, uid.TagV, "web03")
	filters := map[string][]Filter{
		"literal":  {{TagK: host, Type: LiteralOr, Values: []string{"web01", "web02", "web03"}}},
		"wildcard": {{TagK: host, Type: Wildcard, Pattern: "web*"}},
		"regexp":   {{TagK: host, Type: RegexMatch, Pattern: "web01|web02|web03"}},
	}
	count := func(name string) uint64 {
		t.Helper()
		b, err := ix.Postings(ctx, metric, filters[name])
		if err != nil {
			t.Fatal(err)
		}
		n := b.GetCardinality()
		b.Clear() // the caller's: the next answer must not see this
		return n
	}
	for name := range filters {
		if n, m := count(name), count(name); n != 1 || m != 1 {
			t.Fatalf("%s: %d then %d series, want 1 twice", name, n, m)
		}
	}
	mustRegister(t, ix, s.tsuid(t, "m", "host=web02"), 0, 0)
	for name := range filters {
		if n := count(name); n != 2 {
			t.Fatalf("%s after a series was added: %d series, want 2", name, n)
		}
	}
	mustRegister(t, other, s.tsuid(t, "m", "host=web03"), 0, 0)
	mustRefresh(t, ix)
	for name := range filters {
		if n := count(name); n != 3 {
			t.Fatalf("%s after a refresh found another daemon's series: %d series, want 3", name, n)
		}
	}
}
