package api

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/uid/tsmeta"
)

// uidMetaJSON is a UIDMeta nobody wrote, as OpenTSDB's UIDMeta bean
// serializes (docs api_http/uid/uidmeta): uid, type, name, description,
// notes, created, custom, displayName.
func uidMetaJSON(uidHex, typ, name string) string {
	return fmt.Sprintf(`{"uid":%q,"type":%q,"name":%q,"description":"","notes":"","created":0,"custom":null,"displayName":""}`, uidHex, typ, name)
}

// tsMetaJSON is the TSMeta of a series as OpenTSDB's TSMeta bean
// serializes (src/meta/TSMeta.java, @JsonInclude(NON_NULL): fields in
// declaration order, custom left out when null, then the getter-only
// displayName, dataType, lastReceived, totalDatapoints; the docs'
// api_http/search TSMETA example has this order). fields is what goes
// between "tags" and "displayName".
func (m *metaStack) tsMetaJSON(t *testing.T, s tseries, fields, tail string) string {
	t.Helper()
	tsuid := m.tsuid(t, s)
	b, _ := hex.DecodeString(tsuid)
	out := fmt.Sprintf(`{"tsuid":%q,"metric":%s,"tags":[`, tsuid, uidMetaJSON(tsuid[:6], "METRIC", s.metric))
	for i := 3; i < len(b); i += 6 {
		k, v := strings.ToUpper(hex.EncodeToString(b[i:i+3])), strings.ToUpper(hex.EncodeToString(b[i+3:i+6]))
		kn, vn := m.name(t, "tagk", k), m.name(t, "tagv", v)
		if i > 3 {
			out += ","
		}
		out += uidMetaJSON(k, "TAGK", kn) + "," + uidMetaJSON(v, "TAGV", vn)
	}
	return out + "]," + fields + "," + tail + "}"
}

func (m *metaStack) name(t *testing.T, kind, h string) string {
	b, _ := hex.DecodeString(h)
	k := map[string]int{"tagk": 1, "tagv": 2}[kind]
	var n string
	for _, s := range metaSeries {
		for kk, vv := range s.tags {
			want := kk
			if k == 2 {
				want = vv
			}
			if strings.EqualFold(m.tsuidPart(t, kind, want), hex.EncodeToString(b)) {
				n = want
			}
		}
	}
	return n
}

func (m *metaStack) tsuidPart(t *testing.T, kind, name string) string {
	s := tseries{metric: metaSeries[0].metric, tags: map[string]string{}}
	if kind == "tagk" {
		s.tags[name] = "web01"
		if name == "ключ" {
			s.tags[name] = "значение"
		}
		if name == "path" {
			s.tags[name] = "/x"
		}
		return m.tsuid(t, s)[6:12]
	}
	for _, ser := range metaSeries {
		for kk, vv := range ser.tags {
			if vv == name {
				s.tags[kk] = vv
				return m.tsuid(t, s)[12:18]
			}
		}
	}
	return ""
}

const (
	defaultTSFields = `"description":"","notes":"","created":0,"units":"","retention":0,"max":"NaN","min":"NaN"`
	defaultTSTail   = `"displayName":"","dataType":"","lastReceived":0,"totalDatapoints":0`
)

// TestTSMetaEndpoint: /api/uid/tsmeta as OpenTSDB's UniqueIdRpc.handleTSMeta
// answers (docs api_http/uid/tsmeta), except that every series of the index
// has a TSMeta (OpenTSDB: 404 until tracking made one).
func TestTSMetaEndpoint(t *testing.T) {
	m := newMetaStack(t, Options{})
	m.put(t, metaSeries)
	nice := metaSeries[3] // sys.cpu.nice{host=web01}
	tsuid := m.tsuid(t, nice)
	fresh := m.tsMetaJSON(t, nice, defaultTSFields, defaultTSTail)
	if code, out := m.call(t, "GET", "/api/uid/tsmeta?tsuid="+tsuid, "", nil); code != 200 || out != fresh {
		t.Fatalf("GET fresh = %d\n%s\nwant\n%s", code, out, fresh)
	}
	// POST changes only the given fields; the answer is the whole TSMeta.
	code, out := m.call(t, "POST", "/api/uid/tsmeta", `{"tsuid":"`+tsuid+`","description":"CPU nice","custom":{"owner":"jd"},"max":100,"retention":"30"}`, nil)
	want := m.tsMetaJSON(t, nice, `"description":"CPU nice","notes":"","created":0,"custom":{"owner":"jd"},"units":"","retention":30,"max":100.0,"min":"NaN"`, defaultTSTail)
	if code != 200 || out != want {
		t.Fatalf("POST = %d\n%s\nwant\n%s", code, out, want)
	}
	code, out = m.call(t, "POST", "/api/uid/tsmeta?tsuid="+tsuid+"&units=%25&data_type=gauge", "", nil)
	want = m.tsMetaJSON(t, nice, `"description":"CPU nice","notes":"","created":0,"custom":{"owner":"jd"},"units":"%","retention":30,"max":100.0,"min":"NaN"`,
		`"displayName":"","dataType":"gauge","lastReceived":0,"totalDatapoints":0`)
	if code != 200 || out != want {
		t.Fatalf("POST by query string = %d\n%s\nwant\n%s", code, out, want)
	}
	// Tracked counters show through (the flusher writes them; here the
	// tracker directly).
	tb, _ := hex.DecodeString(tsuid)
	if err := tsmeta.NewTracker(m.meta, tsmeta.TrackCount, 1).Track(context.Background(),
		[]tsmeta.Row{{TSUID: tb, Points: 42, LastWrite: 1700000500123}}); err != nil {
		t.Fatal(err)
	}
	// PUT resets what it does not name; the counters stay.
	code, out = m.call(t, "PUT", "/api/uid/tsmeta", `{"tsuid":"`+tsuid+`","displayName":"Nice"}`, nil)
	want = m.tsMetaJSON(t, nice, `"description":"","notes":"","created":1700000500,"units":"","retention":0,"max":"NaN","min":"NaN"`,
		`"displayName":"Nice","dataType":"","lastReceived":1700000500,"totalDatapoints":42`)
	if code != 200 || out != want {
		t.Fatalf("PUT = %d\n%s\nwant\n%s", code, out, want)
	}
	// Nothing changed: 304 with no body (IllegalStateException).
	if code, out := m.call(t, "POST", "/api/uid/tsmeta", `{"tsuid":"`+tsuid+`","notes":""}`, nil); code != 304 || out != "" {
		t.Errorf("no change = %d %s", code, out)
	}
	// m= lists every series the lookup finds (formatTSMetaListV1).
	code, out = m.call(t, "GET", "/api/uid/tsmeta?m=sys.cpu.nice", "", nil)
	if wantList := "[" + want + "]"; code != 200 || out != wantList {
		t.Errorf("GET m= = %d\n%s\nwant\n%s", code, out, wantList)
	}
	// DELETE removes the user's fields (204); the counters stay.
	if code, out := m.call(t, "DELETE", "/api/uid/tsmeta?tsuid="+tsuid, "", nil); code != 204 || out != "" {
		t.Errorf("DELETE = %d %s", code, out)
	}
	code, out = m.call(t, "GET", "/api/uid/tsmeta?tsuid="+tsuid, "", nil)
	want = m.tsMetaJSON(t, nice, `"description":"","notes":"","created":1700000500,"units":"","retention":0,"max":"NaN","min":"NaN"`,
		`"displayName":"","dataType":"","lastReceived":1700000500,"totalDatapoints":42`)
	if code != 200 || out != want {
		t.Errorf("GET after DELETE = %d\n%s\nwant\n%s", code, out, want)
	}
	// POST by m= for a series with TSMeta.
	code, out = m.call(t, "POST", "/api/uid/tsmeta?m=sys.cpu.nice{host=web01}", `{"notes":"by m"}`, nil)
	if code != 200 || !strings.Contains(out, `"notes":"by m"`) || !strings.HasPrefix(out, `{"tsuid":"`+tsuid+`"`) {
		t.Errorf("POST m= = %d %s", code, out)
	}
	// A series the index does not hold needs create=true.
	code, out = m.call(t, "POST", "/api/uid/tsmeta?m=sys.cpu.nice{host=web02}", `{"notes":"new"}`, nil)
	if code != 400 || out != `{"error":{"code":400,"message":"Could not find TSMeta, specify \"create=true\" to create a new one."}}` {
		t.Errorf("POST m= without create = %d %s", code, out)
	}
	newTS := tseries{"sys.cpu.nice", map[string]string{"host": "web02"}}
	code, out = m.call(t, "POST", "/api/uid/tsmeta?m=sys.cpu.nice{host=web02}&create=true", `{"notes":"new"}`, nil)
	if code != 200 || !strings.Contains(out, `"notes":"new"`) || !strings.HasPrefix(out, `{"tsuid":"`+m.tsuid(t, newTS)+`"`) ||
		!regexp.MustCompile(`"notes":"new","created":[1-9][0-9]{9},`).MatchString(out) {
		t.Errorf("POST m= create = %d %s", code, out)
	}
	if code, _ := m.call(t, "GET", "/api/uid/tsmeta?tsuid="+m.tsuid(t, newTS), "", nil); code != 200 {
		t.Errorf("GET created = %d", code)
	}
	// Names that exist, a series that does not.
	unindexed := m.tsuid(t, tseries{"sys.cpu.user", map[string]string{"host": "web01"}})
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/uid/tsmeta", "", 400, `{"error":{"code":400,"message":"Missing parameter <code>m</code>"}}`},
		{"GET", "/api/uid/tsmeta?tsuid=000001000001000009", "", 404, `{"error":{"code":404,"message":"Could not find Timeseries meta data"}}`},
		{"GET", "/api/uid/tsmeta?tsuid=00000100", "", 400, `"message":"Unable to parse the TSUID"`},
		{"GET", "/api/uid/tsmeta?m=nosuch.metric", "", 404, `"message":"Unable to find one of the UIDs"`},
		{"GET", "/api/uid/tsmeta?m=*", "", 404, `"message":"Unable to find one of the UIDs"`}, // getUID("*") fails in OpenTSDB too
		{"POST", "/api/uid/tsmeta", `{"tsuid":"` + unindexed + `","notes":"x"}`, 400,
			`{"error":{"code":400,"message":"Requested TSMeta did not exist","details":"Requested TSMeta did not exist"}}`},
		{"POST", "/api/uid/tsmeta?m=nosuch{host=web01}&create=true", `{"notes":"x"}`, 404, `"message":"Unable to find one or more UIDs"`},
		{"POST", "/api/uid/tsmeta?tsuid=" + tsuid + "&max=abc", "", 400, `{"error":{"code":400,"message":"Unable to parse 'max' value"}}`},
		{"POST", "/api/uid/tsmeta?tsuid=" + tsuid + "&retention=1.5", "", 400, `{"error":{"code":400,"message":"Unable to parse 'retention' value"}}`},
		{"POST", "/api/uid/tsmeta", `{"tsuid":"` + tsuid + `","custom":[1]}`, 400, `"message":"Unable to parse the given JSON"`},
		{"DELETE", "/api/uid/tsmeta", `{"notes":"x"}`, 400, `{"error":{"code":400,"message":"Unable to delete TSMeta information","details":"Missing UID"}}`},
		{"PATCH", "/api/uid/tsmeta", "", 405, `"message":"Method not allowed"`},
	} {
		code, out := m.call(t, tc.method, tc.path, tc.body, nil)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s %s = %d %s\nwant %d %s", tc.method, tc.path, tc.body, code, out, tc.code, tc.want)
		}
	}
}
