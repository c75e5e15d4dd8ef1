package opentsdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// This file is a naive reference for /api/query written from OpenTSDB
// 2.4's semantics (docs/opentsdb.md, HTTP API), not from tsd's code: it
// selects, downsamples, rates, interpolates and aggregates the raw points
// the test wrote, in the most direct way, so the engine's output can be
// compared with it.

// refSpec is one sub-query for the reference.
type refSpec struct {
	metric     string
	filters    []tsquery.Filter
	explicit   bool
	agg        string
	dsInterval int64 // ms; 0 none
	dsAgg      string
	dsFill     string // "", "nan", "null", "zero"
	rate       bool
	counter    bool
	counterMax int64
	resetValue int64
	dropResets bool
	start, end int64 // ms
}

// refPt is an output point: an integer, a double or an empty bucket.
type refPt struct {
	t     int64
	f     float64
	i     int64
	isInt bool
}

type refGroup struct {
	tags    map[string]string
	aggTags []string
	pts     []refPt
}

// refMatch is the reference filter semantics (OpenTSDB's tag-value
// filters, wildcards anchored as tsd's index documents).
func refMatch(f tsquery.Filter, tags map[string]string) bool {
	v, ok := tags[f.Tagk]
	lits := strings.Split(f.Filter, "|")
	in := func(v string, fold bool) bool {
		for _, l := range lits {
			if l == v || fold && strings.EqualFold(l, v) {
				return true
			}
		}
		return false
	}
	switch f.Type {
	case "literal_or":
		return ok && in(v, false)
	case "iliteral_or":
		return ok && in(v, true)
	case "not_literal_or":
		return !ok || !in(v, false)
	case "not_iliteral_or":
		return !ok || !in(v, true)
	case "wildcard":
		m, _ := path.Match(f.Filter, v)
		return ok && m
	case "iwildcard":
		m, _ := path.Match(strings.ToLower(f.Filter), strings.ToLower(v))
		return ok && m
	case "regexp":
		return ok && regexp.MustCompile(f.Filter).MatchString(v)
	case "not_key":
		return !ok
	}
	panic("unknown filter " + f.Type)
}

// refSelect returns the raw series the spec selects.
func refSelect(raw map[string]*rawSeries, sp refSpec) []*rawSeries {
	var out []*rawSeries
	for _, r := range raw {
		if r.metric != sp.metric {
			continue
		}
		ok := true
		keys := map[string]bool{}
		for _, f := range sp.filters {
			ok = ok && refMatch(f, r.tags)
			keys[f.Tagk] = true
		}
		if sp.explicit && len(keys) != len(r.tags) {
			ok = false
		}
		for k := range r.tags {
			if sp.explicit && !keys[k] {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// window is the range of rows OpenTSDB scans, [start, end): the
// start aligned down to the interval then the hour; the end one second on,
// extended to the next interval boundary, then up to an hour boundary
// (always forward without downsampling).
func (sp refSpec) window() (int64, int64) {
	s := sp.start / 1000
	if sp.dsInterval > 0 {
		s -= s % (sp.dsInterval / 1000)
	}
	s -= s % 3600
	e := sp.end/1000 + 1
	if sp.dsInterval > 0 {
		e += sp.dsInterval/1000 - e%(sp.dsInterval/1000)
		if e%3600 != 0 {
			e += 3600 - e%3600
		}
	} else {
		e += 3600 - e%3600
	}
	return s * 1000, e * 1000
}

// inWindow reports whether the series has raw points in the window: only
// those join a group (OpenTSDB's spans come from the rows scanned).
func (sp refSpec) inWindow(pts []series.Point) bool {
	ws, we := sp.window()
	for _, p := range pts {
		if p.T >= ws && p.T < we {
			return true
		}
	}
	return false
}

// transform downsamples and rates one series' points of the window.
func (sp refSpec) transform(pts []series.Point) []refPt {
	ws, we := sp.window()
	var in []refPt
	for _, p := range pts {
		if p.T >= ws && p.T < we {
			in = append(in, refPt{t: p.T, f: p.Float(), i: p.Int(), isInt: p.IsInt()})
		}
	}
	if sp.dsInterval > 0 {
		in = sp.downsample(in)
	}
	if sp.rate {
		in = sp.rates(in)
	}
	return in
}

func (sp refSpec) downsample(in []refPt) []refPt {
	buckets := map[int64][]float64{}
	for _, p := range in {
		b := p.t - p.t%sp.dsInterval
		buckets[b] = append(buckets[b], p.f)
	}
	if sp.dsFill != "" {
		for b := sp.start - sp.start%sp.dsInterval; b <= sp.end; b += sp.dsInterval {
			if _, ok := buckets[b]; !ok {
				buckets[b] = nil
			}
		}
	}
	var out []refPt
	for b, vs := range buckets {
		switch {
		case len(vs) > 0:
			out = append(out, refPt{t: b, f: aggFloat(sp.dsAgg, vs)})
		case sp.dsFill == "zero":
			out = append(out, refPt{t: b})
		default:
			out = append(out, refPt{t: b, f: math.NaN()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out
}

func (sp refSpec) rates(in []refPt) []refPt {
	var out []refPt
	for i := 1; i < len(in); i++ {
		dt := float64(in[i].t-in[i-1].t) / 1000
		d := in[i].f - in[i-1].f
		if sp.counter && d < 0 {
			if sp.dropResets {
				continue
			}
			d = float64(sp.counterMax) - in[i-1].f + in[i].f
			if r := d / dt; sp.resetValue > 0 && r > float64(sp.resetValue) {
				d = 0
			}
		}
		out = append(out, refPt{t: in[i].t, f: d / dt})
	}
	return out
}

// aggFloat aggregates doubles, skipping NaN; none left gives NaN.
func aggFloat(name string, vs []float64) float64 {
	vs = slices.DeleteFunc(slices.Clone(vs), math.IsNaN)
	if len(vs) == 0 {
		return math.NaN()
	}
	switch name {
	case "sum", "zimsum":
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s
	case "avg":
		return aggFloat("sum", vs) / float64(len(vs))
	case "min":
		return slices.Min(vs)
	case "max":
		return slices.Max(vs)
	case "count":
		return float64(len(vs))
	case "first":
		return vs[0]
	case "last":
		return vs[len(vs)-1]
	case "diff":
		return vs[len(vs)-1] - vs[0]
	}
	panic("reference: no aggregator " + name)
}

// aggInt aggregates integers as Java's long arithmetic does.
func aggInt(name string, vs []int64) int64 {
	switch name {
	case "sum", "zimsum":
		var s int64
		for _, v := range vs {
			s += v
		}
		return s
	case "avg":
		return aggInt("sum", vs) / int64(len(vs))
	case "min":
		return slices.Min(vs)
	case "max":
		return slices.Max(vs)
	case "count":
		return int64(len(vs))
	case "first":
		return vs[0]
	case "last":
		return vs[len(vs)-1]
	case "diff":
		return vs[len(vs)-1] - vs[0]
	}
	panic("reference: no aggregator " + name)
}

// zim reports the aggregators that take a series with no point at a
// timestamp inside its span as 0 (OpenTSDB's ZIM interpolation), where
// the others interpolate linearly.
func zim(name string) bool {
	switch name {
	case "zimsum", "count", "first", "last":
		return true
	}
	return false
}

// at returns a series' value at t: its point, or a linear interpolation
// between its neighbours (integer arithmetic between two integers), or
// nothing outside its span or when interpolation is off.
func at(pts []refPt, t int64, lerp, zero bool) (refPt, bool) {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].t >= t })
	if i < len(pts) && pts[i].t == t {
		return pts[i], true
	}
	if !lerp || i == 0 || i == len(pts) {
		return refPt{}, false
	}
	a, b := pts[i-1], pts[i]
	if zero {
		return refPt{t: t, isInt: a.isInt && b.isInt}, true
	}
	if a.isInt && b.isInt {
		return refPt{t: t, i: a.i + (b.i-a.i)*(t-a.t)/(b.t-a.t), isInt: true}, true
	}
	return refPt{t: t, f: a.f + float64(t-a.t)*(b.f-a.f)/float64(b.t-a.t)}, true
}

// refRun computes the groups of the spec, in OpenTSDB's order (sorted
// group-by value UIDs).
func refRun(t testing.TB, s *stack, sp refSpec) []refGroup {
	t.Helper()
	var gb []string
	for _, f := range sp.filters {
		if f.GroupBy && !slices.Contains(gb, f.Tagk) {
			gb = append(gb, f.Tagk)
		}
	}
	slices.SortFunc(gb, func(a, b string) int { return cmpUID(s.uidOf(t, uid.TagK, a), s.uidOf(t, uid.TagK, b)) })
	groups := map[string][]*rawSeries{}
	for _, r := range refSelect(s.raw, sp) {
		key, ok := "", true
		for _, k := range gb {
			v, has := r.tags[k]
			ok = ok && has
			key += fmt.Sprintf("%016x", s.uidOf(t, uid.TagV, v))
		}
		if ok && sp.inWindow(r.pts) {
			groups[key] = append(groups[key], r)
		}
	}
	keys := slices.Sorted(func(y func(string) bool) {
		for k := range groups {
			if !y(k) {
				return
			}
		}
	})
	var out []refGroup
	for _, k := range keys {
		out = append(out, refGroupOf(t, s, sp, groups[k]))
	}
	return out
}

func cmpUID(a, b uid.ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *stack) uidOf(t testing.TB, kind uid.Kind, name string) uid.ID {
	id, err := s.uids.Lookup(context.Background(), kind, []byte(name))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// refGroupOf merges one group's series. Its tags are OpenTSDB's
// SpanGroup.computeTags: a key whose value no two members disagree on is
// a tag (some members may lack it), a key with two values is aggregated.
func refGroupOf(t testing.TB, s *stack, sp refSpec, members []*rawSeries) refGroup {
	g := refGroup{tags: map[string]string{}}
	values := map[string]map[string]bool{}
	for _, m := range members {
		for k, v := range m.tags {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
		}
	}
	for k, vs := range values {
		if len(vs) > 1 {
			g.aggTags = append(g.aggTags, k)
			continue
		}
		for v := range vs {
			g.tags[k] = v
		}
	}
	slices.SortFunc(g.aggTags, func(a, b string) int { return cmpUID(s.uidOf(t, uid.TagK, a), s.uidOf(t, uid.TagK, b)) })
	// OpenTSDB walks a group's series in TSUID order (its spans sit in a
	// map sorted by row key, salt and time left out), which first, last
	// and diff see.
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b *rawSeries) int { return strings.Compare(s.tsuidHex(t, a), s.tsuidHex(t, b)) })
	series := make([][]refPt, len(members))
	stamps := map[int64]bool{}
	for i, m := range members {
		series[i] = sp.transform(m.pts)
		for _, p := range series[i] {
			if p.t >= sp.start && p.t <= sp.end {
				stamps[p.t] = true
			}
		}
	}
	ts := slices.Sorted(func(y func(int64) bool) {
		for k := range stamps {
			if !y(k) {
				return
			}
		}
	})
	lerp := sp.dsFill == "" && !sp.rate
	for _, x := range ts {
		var vals []refPt
		for _, ps := range series {
			if p, ok := at(ps, x, lerp, zim(sp.agg)); ok {
				vals = append(vals, p)
			}
		}
		g.pts = append(g.pts, merge(sp.agg, x, vals))
	}
	return g
}

// merge aggregates the values at one timestamp: on integers when all are.
func merge(name string, x int64, vals []refPt) refPt {
	ints, fs, is := true, []float64{}, []int64{}
	for _, v := range vals {
		ints = ints && v.isInt
		fs, is = append(fs, v.f), append(is, v.i)
	}
	if ints {
		return refPt{t: x, i: aggInt(name, is), isInt: true}
	}
	for i, v := range vals {
		if v.isInt {
			fs[i] = float64(v.i)
		}
	}
	return refPt{t: x, f: aggFloat(name, fs)}
}

// compare checks the engine's groups against the reference's.
func compare(t *testing.T, what string, got []outSeries, want []refGroup, null bool) {
	t.Helper()
	if len(want) == 0 || len(want[0].pts) == 0 {
		t.Errorf("%s: the reference has no points: the case tests nothing", what)
	}
	compareAll(t, what, got, want, null)
}

// compareAll is compare for random cases, which may select nothing.
func compareAll(t *testing.T, what string, got []outSeries, want []refGroup, null bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d series, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !mapsEqual(g.Tags, w.tags) || !slices.Equal(g.AggregateTags, w.aggTags) && len(g.AggregateTags)+len(w.aggTags) > 0 {
			t.Errorf("%s series %d: tags %v aggregateTags %v, want %v %v", what, i, g.Tags, g.AggregateTags, w.tags, w.aggTags)
		}
		if len(g.DPS) != len(w.pts) {
			t.Errorf("%s series %d (%v): %d points, want %d\ngot  %v\nwant %v", what, i, w.tags, len(g.DPS), len(w.pts), g.DPS, w.pts)
			continue
		}
		for j, p := range w.pts {
			if err := samePoint(g.DPS[j], p, null); err != nil {
				t.Errorf("%s series %d (%v) point %d: %v", what, i, w.tags, j, err)
				break
			}
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// samePoint compares a decoded [ts, v] pair (ts in seconds unless the
// query asked for ms; the caller's reference stamps match) with p.
func samePoint(pair [2]any, p refPt, null bool) error {
	ts, _ := pair[0].(json.Number).Int64()
	if ts != p.t && ts != p.t/1000 {
		return fmt.Errorf("timestamp %d, want %d", ts, p.t)
	}
	switch v := pair[1].(type) {
	case nil:
		if !null || !math.IsNaN(p.f) || p.isInt {
			return fmt.Errorf("null, want %+v", p)
		}
	case string:
		if v != "NaN" || null || !math.IsNaN(p.f) || p.isInt {
			return fmt.Errorf("%q, want %+v", v, p)
		}
	case json.Number:
		isInt := !strings.ContainsAny(v.String(), ".E")
		if isInt != p.isInt {
			return fmt.Errorf("%s: integer %v, want %+v", v, isInt, p)
		}
		if isInt {
			n, _ := strconv.ParseInt(v.String(), 10, 64)
			if n != p.i {
				return fmt.Errorf("%d, want %d", n, p.i)
			}
			return nil
		}
		f, _ := v.Float64()
		if math.Abs(f-p.f) > 1e-9*math.Max(1, math.Abs(p.f)) {
			return fmt.Errorf("%v, want %v", f, p.f)
		}
	}
	return nil
}
