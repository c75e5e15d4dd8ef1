package api

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// searchTime is SearchQuery.time, a float Jackson writes as "N.0".
var searchTime = regexp.MustCompile(`"time":[0-9]+\.0,`)

// search calls a search and blanks its time.
func (m *metaStack) search(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	code, out := m.call(t, method, path, body, nil)
	if code == 200 && !searchTime.MatchString(out) {
		t.Errorf("%s: no float time in %s", path, out)
	}
	return code, searchTime.ReplaceAllString(out, `"time":T,`)
}

// TestSearchEndpoints: /api/search/tsmeta, tsmeta_summary, tsuids and
// uidmeta in OpenTSDB's SearchQuery shapes (docs api_http/search/index:
// type, query, limit, time, results, startIndex, totalResults; the
// fields-then-getters order of src/search/SearchQuery.java), answered from
// the index with lookup's metric{tagk=value} form and * globs.
func TestSearchEndpoints(t *testing.T) {
	m := newMetaStack(t, Options{})
	m.put(t, metaSeries)
	ts := func(ss ...tseries) []string {
		var out []string
		for _, s := range ss {
			out = append(out, m.tsuid(t, s))
		}
		slices.Sort(out)
		return out
	}
	quoted := func(ts []string) string {
		var q []string
		for _, s := range ts {
			q = append(q, `"`+s+`"`)
		}
		return strings.Join(q, ",")
	}
	cpu := ts(metaSeries[0], metaSeries[1], metaSeries[2], metaSeries[3])
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"sys.cpu.*", cpu},
		{"sys.*{host=web0*}", ts(metaSeries[0], metaSeries[1], metaSeries[2], metaSeries[3], metaSeries[4])},
		{"*{dc=lga}", ts(metaSeries[0], metaSeries[1])},
		{"sys.cpu.user{host=web03}", ts(metaSeries[2])},
		{"*{*=web01}", ts(metaSeries[0], metaSeries[3], metaSeries[4], metaSeries[5])},
		{"*{serv*=*}", ts(metaSeries[5])},
		{"sys.cpu", nil},            // a glob must match the whole name
		{"nosuch{host=web01}", nil}, // an unknown name matches nothing
		{"*.m", ts(metaSeries[7])},
	} {
		code, out := m.search(t, "GET", "/api/search/tsuids?limit=100&query="+url.QueryEscape(tc.query), "")
		want := fmt.Sprintf(`{"type":"TSUIDS","query":%q,"limit":100,"time":T,"results":[%s],"startIndex":0,"totalResults":%d}`,
			tc.query, quoted(tc.want), len(tc.want))
		if code != 200 || out != want {
			t.Errorf("tsuids %q = %d\n%s\nwant\n%s", tc.query, code, out, want)
		}
	}
	// Paging: startIndex and limit cut the page; totalResults counts all.
	code, out := m.search(t, "POST", "/api/search/tsuids", `{"query":"sys.cpu.*","limit":2,"startIndex":1}`)
	if want := fmt.Sprintf(`{"type":"TSUIDS","query":"sys.cpu.*","limit":2,"time":T,"results":[%s],"startIndex":1,"totalResults":4}`, quoted(cpu[1:3])); code != 200 || out != want {
		t.Errorf("paged = %d\n%s\nwant\n%s", code, out, want)
	}
	// tsmeta_summary: tags, metric, tsuid per series (the docs' example).
	code, out = m.search(t, "GET", "/api/search/tsmeta_summary?query=sys.cpu.nice", "")
	want := fmt.Sprintf(`{"type":"TSMETA_SUMMARY","query":"sys.cpu.nice","limit":25,"time":T,"results":[{"tags":{"host":"web01"},"metric":"sys.cpu.nice","tsuid":%q}],"startIndex":0,"totalResults":1}`,
		m.tsuid(t, metaSeries[3]))
	if code != 200 || out != want {
		t.Errorf("summary = %d\n%s\nwant\n%s", code, out, want)
	}
	// tsmeta: whole TSMeta objects, as /api/uid/tsmeta writes them.
	code, out = m.search(t, "GET", "/api/search/tsmeta?query=sys.cpu.nice", "")
	want = `{"type":"TSMETA","query":"sys.cpu.nice","limit":25,"time":T,"results":[` +
		m.tsMetaJSON(t, metaSeries[3], defaultTSFields, defaultTSTail) + `],"startIndex":0,"totalResults":1}`
	if code != 200 || out != want {
		t.Errorf("tsmeta = %d\n%s\nwant\n%s", code, out, want)
	}
	// uidmeta: a glob on names of every kind, metrics first.
	code, out = m.search(t, "GET", "/api/search/uidmeta?query=web0*&limit=2&start_index=1", "")
	want = `{"type":"UIDMETA","query":"web0*","limit":2,"time":T,"results":[` +
		uidMetaJSON(m.tsuidPart(t, "tagv", "web02"), "TAGV", "web02") + "," + uidMetaJSON(m.tsuidPart(t, "tagv", "web03"), "TAGV", "web03") +
		`],"startIndex":1,"totalResults":3}`
	if code != 200 || out != want {
		t.Errorf("uidmeta = %d\n%s\nwant\n%s", code, out, want)
	}
	for _, tc := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/api/search/tsuids", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>query</code>"}}`},
		{"/api/search/tsuids?query=*&limit=x", "", 400, `{"error":{"code":400,"message":"Unable to convert 'limit' to a valid number"}}`},
		{"/api/search/tsuids?query=*&start_index=x", "", 400, `"message":"Unable to convert 'start_index' to a valid number"`},
		{"/api/search/tsuids?query=m{a", "", 400, `"message":"Unable to parse query"`},
		{"/api/search/tsmeta", `{"query":1}`, 400, `"message":"Unable to parse the given JSON"`},
		{"/api/search/nosuch", "", 400, `"message":"Invalid search query type supplied"`},
	} {
		method := "GET"
		if tc.body != "" {
			method = "POST"
		}
		code, out := m.call(t, method, tc.path, tc.body, nil)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s = %d %s\nwant %d %s", tc.path, tc.body, code, out, tc.code, tc.want)
		}
	}
}

// TestSearchAnnotation: /api/search/annotation lists the annotations of the
// series the query matches (the global ones too when it matches every
// series) in the docs' ANNOTATION shape, each note as /api/annotation
// writes it (Annotation's bean JSON).
func TestSearchAnnotation(t *testing.T) {
	m := newMetaStack(t, Options{Annotations: noteStore(t)})
	m.put(t, metaSeries)
	nice := m.tsuid(t, metaSeries[3])
	user := m.tsuid(t, metaSeries[0])
	for _, body := range []string{
		`{"tsuid":"` + nice + `","startTime":1700000100,"description":"nice note"}`,
		`{"tsuid":"` + user + `","startTime":1700000200,"description":"user note","custom":{"owner":"jd"}}`,
		`{"startTime":1700000050,"description":"global"}`,
	} {
		if code, out := m.call(t, "POST", "/api/annotation", body, nil); code != 200 {
			t.Fatalf("POST annotation %s = %d %s", body, code, out)
		}
	}
	noteJSON := func(tsuid, desc, custom string, start int) string {
		s := fmt.Sprintf(`{"tsuid":%q,"description":%q,"notes":""`, tsuid, desc)
		if custom != "" {
			s += `,"custom":` + custom
		}
		return s + fmt.Sprintf(`,"startTime":%d,"endTime":0}`, start)
	}
	code, out := m.search(t, "GET", "/api/search/annotation?query=sys.cpu.nice", "")
	want := `{"type":"ANNOTATION","query":"sys.cpu.nice","limit":25,"time":T,"results":[` + noteJSON(nice, "nice note", "", 1700000100) +
		`],"startIndex":0,"totalResults":1}`
	if code != 200 || out != want {
		t.Errorf("one series = %d\n%s\nwant\n%s", code, out, want)
	}
	// Every series: the global note first, then by TSUID.
	first, second := noteJSON(nice, "nice note", "", 1700000100), noteJSON(user, "user note", `{"owner":"jd"}`, 1700000200)
	if user < nice {
		first, second = second, first
	}
	code, out = m.search(t, "GET", "/api/search/annotation?query=*&limit=2&start_index=1", "")
	want = `{"type":"ANNOTATION","query":"*","limit":2,"time":T,"results":[` + first + "," + second + `],"startIndex":1,"totalResults":3}`
	if code != 200 || out != want {
		t.Errorf("every series, paged = %d\n%s\nwant\n%s", code, out, want)
	}
	code, out = m.search(t, "GET", "/api/search/annotation?query=*&limit=1", "")
	if want := `"results":[` + noteJSON("", "global", "", 1700000050) + `]`; code != 200 || !strings.Contains(out, want) {
		t.Errorf("global first = %d %s, want %s", code, out, want)
	}
}
