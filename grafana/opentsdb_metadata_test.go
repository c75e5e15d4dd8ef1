package grafana

import (
	"encoding/json"
	"slices"
	"testing"
)

// testMetadata replays the GET requests of
// testdata/opentsdb_metadata_requests.txt: the health checks, metric,
// tag key and tag value suggestions (q, max), tag_names and tag_values
// through /api/search/lookup, and the editor's aggregator and filter type
// lists, asserting what Grafana reads of each answer.
func testMetadata(t *testing.T, base string) {
	reqs := metadataRequests(t)
	get := func(name string, dst any) {
		t.Helper()
		path, ok := reqs[name]
		if !ok {
			t.Fatalf("no request %q in the fixture", name)
		}
		code, body := send(t, "GET", base+path, "", nil, nil)
		if code != 200 {
			t.Errorf("%s: GET %s = %d %s", name, path, code, body)
			return
		}
		if err := json.Unmarshal([]byte(body), dst); err != nil {
			t.Errorf("%s: GET %s: %v: %s", name, path, err, body)
		}
	}
	for name, want := range map[string][]string{
		"health_old":     {},
		"health_new":     {},
		"metrics_prefix": {"sys.cpu.user"},
		"metrics_all":    {"if.octets.in", "sys.cpu.user"},
		"tagk_prefix":    {"host"},
		"tagk_all":       {"dc", "host"},
		"tagv_max":       {"web01", "web02"},
	} {
		var got []string
		if get(name, &got); got == nil || !slices.Equal(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	testLookups(t, get)
	testEditorLists(t, get)
}

// testLookups checks tag_names (tag keys of results[].tags) and
// tag_values (values of one key, optionally under another key's value),
// collected in first-seen order as the browser does, compared as sets.
func testLookups(t *testing.T, get func(string, any)) {
	type lookup struct {
		Results []struct {
			Metric string            `json:"metric"`
			Tags   map[string]string `json:"tags"`
		} `json:"results"`
	}
	collect := func(name, key string) []string {
		var l lookup
		get(name, &l)
		var out []string
		for _, r := range l.Results {
			for k, v := range r.Tags {
				s := k
				if key != "" {
					if k != key {
						continue
					}
					s = v
				}
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		name, key string
		want      []string
	}{
		{"tag_names", "", []string{"dc", "host"}},
		{"tag_values", "host", []string{"web01", "web02", "web03"}},
		{"tag_values_filtered", "host", []string{"web01", "web02"}},
		{"tag_values_raw", "host", []string{"web01", "web02"}},
	} {
		if got := collect(c.name, c.key); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

// testEditorLists checks the query editor's lists: /api/aggregators as an
// array holding the editor's defaults, /api/config/filters as an object
// whose keys hold the editor's default filter types, and /api/version (not
// called by Grafana; the usual "is this OpenTSDB" probe of other tools).
func testEditorLists(t *testing.T, get func(string, any)) {
	var aggs []string
	get("aggregators", &aggs)
	for _, a := range []string{"avg", "sum", "min", "max", "dev", "zimsum", "mimmin", "mimmax"} {
		if !slices.Contains(aggs, a) {
			t.Errorf("/api/aggregators %v lacks %s", aggs, a)
		}
	}
	var filters map[string]struct {
		Examples    string `json:"examples"`
		Description string `json:"description"`
	}
	get("filters", &filters)
	for _, f := range []string{"wildcard", "iliteral_or", "not_iliteral_or", "not_literal_or", "iwildcard", "literal_or", "regexp"} {
		if e, ok := filters[f]; !ok || e.Description == "" || e.Examples == "" {
			t.Errorf("/api/config/filters lacks %s: %+v", f, filters)
		}
	}
	var v map[string]any
	if get("version", &v); v["version"] == nil || v["version"] == "" {
		t.Errorf("/api/version = %v, want a version field", v)
	}
}
