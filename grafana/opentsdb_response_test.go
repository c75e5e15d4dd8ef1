package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
)

// otsNote has the annotation fields Grafana reads (description, startTime
// floored to seconds) and the series note's tsuid.
type otsNote struct {
	TSUID       string  `json:"tsuid"`
	Description string  `json:"description"`
	StartTime   float64 `json:"startTime"`
}

// otsResult is one element of an /api/query answer with every field one
// of Grafana's generations reads.
type otsResult struct {
	Metric            string            `json:"metric"`
	Tags              map[string]string `json:"tags"`
	AggregateTags     []string          `json:"aggregateTags"`
	Query             *otsQueryEcho     `json:"query"`
	Annotations       []otsNote         `json:"annotations"`
	GlobalAnnotations []otsNote         `json:"globalAnnotations"`
	DPS               json.RawMessage   `json:"dps"`
}

// otsQueryEcho is the showQuery echo; Grafana 2.3 mode maps a result to
// its target by index.
type otsQueryEcho struct {
	Index      *int    `json:"index"`
	Metric     string  `json:"metric"`
	Aggregator string  `json:"aggregator"`
	Downsample *string `json:"downsample"`
	Rate       bool    `json:"rate"`
}

// otsWant is an expected result element.
type otsWant struct {
	metric  string
	tags    map[string]string
	aggTags []string
	pts     []otsPoint
	notes   []otsNote // series annotations, when checked
	index   int       // query.index, when showQuery
	fill    string    // "null" or "nan": the fill policy of empty buckets
}

// wantGroup builds the expected element for members aggregated as one
// group: tags common to all, the others aggregated.
func wantGroup(ms []otsSeries, pts []otsPoint) otsWant {
	w := otsWant{metric: ms[0].metric, tags: maps.Clone(ms[0].tags), pts: pts}
	for k, v := range ms[0].tags {
		for _, s := range ms[1:] {
			if s.tags[k] != v {
				delete(w.tags, k)
				w.aggTags = append(w.aggTags, k)
				break
			}
		}
	}
	slices.Sort(w.aggTags)
	return w
}

// decodeResults decodes an /api/query answer: a JSON array whose elements
// have tags as an object, aggregateTags as an array and dps.
func decodeResults(t *testing.T, name string, code int, body string) []otsResult {
	t.Helper()
	var raw []map[string]json.RawMessage
	if code != 200 || json.Unmarshal([]byte(body), &raw) != nil {
		t.Fatalf("%s: %d %.2000s", name, code, body)
	}
	for i, r := range raw {
		for k, open := range map[string]byte{"metric": '"', "tags": '{', "aggregateTags": '[', "dps": 0} {
			if v, ok := r[k]; !ok || (open != 0 && v[0] != open) {
				t.Fatalf("%s: element %d field %q = %s: %.2000s", name, i, k, v, body)
			}
		}
	}
	var rs []otsResult
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rs
}

// dps reads dps as OpenTSDB writes it: an object keyed by timestamp (in
// ms with ms) or with arrays a list of [ts, value] pairs. Timestamps must
// ascend in the order written (the browser keeps an object's insertion
// order for keys beyond 2^32, ms ones) and values must be JSON numbers
// (Grafana's backend decodes them into float64), except an empty bucket
// of fill policy null (null) or nan ("NaN"), read as NaN.
func dps(raw json.RawMessage, arrays, ms bool, fill string) ([]otsPoint, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	open := json.Delim('{')
	if arrays {
		open = '['
	}
	if tok, err := dec.Token(); err != nil || tok != open {
		return nil, fmt.Errorf("dps %.200s does not start with %v", raw, open)
	}
	var out []otsPoint
	for {
		ts, v, err := dpsNext(dec, arrays)
		if err != nil || ts == "" {
			return out, err
		}
		p, err := dpsPoint(ts, v, ms, fill)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && p.T <= out[len(out)-1].T {
			return nil, fmt.Errorf("dps timestamp %s after %d: not ascending", ts, out[len(out)-1].T)
		}
		out = append(out, p)
	}
}

// dpsNext returns the next timestamp and value, or "" at the end.
func dpsNext(dec *json.Decoder, arrays bool) (string, any, error) {
	if !dec.More() {
		_, err := dec.Token()
		return "", nil, err
	}
	if !arrays {
		k, err := dec.Token()
		if err != nil {
			return "", nil, err
		}
		var v any
		err = dec.Decode(&v)
		return fmt.Sprint(k), v, err
	}
	var pair []any
	if err := dec.Decode(&pair); err != nil || len(pair) != 2 {
		return "", nil, fmt.Errorf("dps element %v is not a [ts, value] pair (%v)", pair, err)
	}
	ts, ok := pair[0].(json.Number)
	if !ok {
		return "", nil, fmt.Errorf("dps timestamp %v is not a number", pair[0])
	}
	return ts.String(), pair[1], nil
}

// dpsPoint converts one timestamp and value to seconds and float.
func dpsPoint(ts string, v any, ms bool, fill string) (otsPoint, error) {
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return otsPoint{}, fmt.Errorf("dps timestamp %q: %v", ts, err)
	}
	if ms {
		if t%1000 != 0 {
			return otsPoint{}, fmt.Errorf("dps ms timestamp %d is not on a second", t)
		}
		t /= 1000
	}
	if (fill == "null" && v == nil) || (fill == "nan" && v == "NaN") {
		return otsPoint{t, math.NaN()}, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return otsPoint{}, fmt.Errorf("dps value %v at %s is not a JSON number", v, ts)
	}
	f, err := n.Float64()
	return otsPoint{t, f}, err
}

// checkResults matches each result to the expected element with the same
// metric and tags and compares aggregateTags, points and, when set, the
// series annotations, the global annotations and query.index.
func checkResults(t *testing.T, name string, rs []otsResult, want []otsWant, o checkOpts) {
	t.Helper()
	if len(rs) != len(want) {
		t.Errorf("%s: %d results, want %d: %+v", name, len(rs), len(want), rs)
	}
	for i, r := range rs {
		j := slices.IndexFunc(want, func(w otsWant) bool { return w.metric == r.Metric && maps.Equal(w.tags, r.Tags) })
		if j < 0 {
			t.Errorf("%s: result %d %s %v not expected", name, i, r.Metric, r.Tags)
			continue
		}
		checkResult(t, fmt.Sprintf("%s: result %d %s %v", name, i, r.Metric, r.Tags), r, want[j], o)
		want = slices.Delete(want, j, j+1)
	}
}

// checkOpts say how a fixture's answer is read.
type checkOpts struct {
	arrays, ms bool
	showQuery  bool
	notes      bool      // compare series annotations
	global     []otsNote // the globalAnnotations every element carries, when notes
}

func checkResult(t *testing.T, name string, r otsResult, w otsWant, o checkOpts) {
	t.Helper()
	agg := slices.Clone(r.AggregateTags)
	slices.Sort(agg)
	if !slices.Equal(agg, w.aggTags) && !(len(agg) == 0 && len(w.aggTags) == 0) {
		t.Errorf("%s: aggregateTags %v, want %v", name, r.AggregateTags, w.aggTags)
	}
	got, err := dps(r.DPS, o.arrays, o.ms, w.fill)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	} else if d := diffPoints(got, w.pts); d != "" {
		t.Errorf("%s: dps %s", name, d)
	}
	if o.showQuery && (r.Query == nil || r.Query.Index == nil || *r.Query.Index != w.index) {
		var idx any = "none"
		if r.Query != nil && r.Query.Index != nil {
			idx = *r.Query.Index
		}
		t.Errorf("%s: query echo index %v, want %d", name, idx, w.index)
	}
	if o.notes {
		checkNotes(t, name+": annotations", r.Annotations, w.notes)
		checkNotes(t, name+": globalAnnotations", r.GlobalAnnotations, o.global)
	}
}

// checkNotes compares what Grafana reads of annotations: description and
// floor(startTime), and the series note's tsuid.
func checkNotes(t *testing.T, name string, got, want []otsNote) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Description == want[i].Description && math.Floor(got[i].StartTime) == want[i].StartTime &&
			got[i].TSUID == want[i].TSUID
	}
	if !ok {
		t.Errorf("%s = %+v, want %+v", name, got, want)
	}
}

// diffPoints describes the first difference between got and want (values
// equal within 1e-9 relative), or returns "".
func diffPoints(got, want []otsPoint) string {
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		nan := math.IsNaN(g.V) || math.IsNaN(w.V)
		if g.T != w.T || (nan && math.IsNaN(g.V) != math.IsNaN(w.V)) || (!nan && math.Abs(g.V-w.V) > 1e-9*math.Max(1, math.Abs(w.V))) {
			return fmt.Sprintf("point %d = %v, want %v (got %d points, want %d)", i, g, w, len(got), len(want))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d points, want %d: got %v, want %v", len(got), len(want), got, want)
	}
	return ""
}

// grafanaDecode decodes an answer into the types Grafana's Go backend
// unmarshals it into (pkg/tsdb/opentsdb: OpenTsdbResponse, or
// OpenTsdbResponse24 for tsdbVersion 4) and builds its frame meta
// tagKeys: sorted tags, then aggregateTags. Any error fails the query in
// Grafana.
func grafanaDecode(body string, v24 bool) ([][]string, error) {
	type common struct {
		Metric        string            `json:"metric"`
		Tags          map[string]string `json:"tags"`
		AggregateTags []string          `json:"aggregateTags"`
	}
	var lt24 []struct {
		common
		DataPoints map[string]float64 `json:"dps"`
	}
	var ge24 []struct {
		common
		DataPoints [][]float64 `json:"dps"`
	}
	var cs []common
	var err error
	if v24 {
		err = json.Unmarshal([]byte(body), &ge24)
		for _, r := range ge24 {
			cs = append(cs, r.common)
		}
	} else {
		err = json.Unmarshal([]byte(body), &lt24)
		for _, r := range lt24 {
			cs = append(cs, r.common)
			for ts := range r.DataPoints {
				if _, perr := strconv.ParseInt(ts, 10, 64); perr != nil {
					err = perr
				}
			}
		}
	}
	var keys [][]string
	for _, c := range cs {
		k := slices.Sorted(maps.Keys(c.Tags))
		keys = append(keys, append(k, c.AggregateTags...))
	}
	return keys, err
}
