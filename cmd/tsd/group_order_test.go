package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDaemonGroupOrder puts one group of twelve series whose tag-key sets
// differ ({host}, {host,rack}, and one without tags) and asks first, last
// and diff of it over HTTP: each answer is the reference computed from
// the none aggregator's series taken in TSUID order, as OpenTSDB walks
// them, and 100 runs of each give the same bytes.
func TestDaemonGroupOrder(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	const ts0 = 1356998400
	var b strings.Builder
	b.WriteString("[")
	for s := range 12 {
		tags := `{}`
		switch {
		case s == 7:
		case s%2 == 0:
			tags = fmt.Sprintf(`{"host":"h%d"}`, (s*5)%12)
		default:
			tags = fmt.Sprintf(`{"host":"h%d","rack":"r%d"}`, (s*5)%12, s%3)
		}
		for i := range 3 {
			if b.Len() > 1 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"metric":"ord","timestamp":%d,"value":%d,"tags":%s}`, ts0+60*i, (s*37+i*11)%50, tags)
		}
	}
	b.WriteString("]")
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put", []byte(b.String()), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	q := "/api/query?start=" + strconv.Itoa(ts0) + "&end=" + strconv.Itoa(ts0+120) + "&show_tsuids&m="
	code, body := d.Get(t, q+"none:ord")
	var each []struct {
		TSUIDs []string         `json:"tsuids"`
		DPS    map[string]int64 `json:"dps"`
	}
	if err := json.Unmarshal([]byte(body), &each); code != 200 || err != nil || len(each) != 12 {
		t.Fatalf("none:ord = %d %s (%v)", code, body, err)
	}
	slices.SortFunc(each, func(a, b struct {
		TSUIDs []string         `json:"tsuids"`
		DPS    map[string]int64 `json:"dps"`
	}) int {
		return strings.Compare(a.TSUIDs[0], b.TSUIDs[0])
	})
	for _, agg := range []string{"first", "last", "diff"} {
		var dps []string
		for i := range 3 {
			k := strconv.Itoa(ts0 + 60*i)
			first, last := each[0].DPS[k], each[len(each)-1].DPS[k]
			v := map[string]int64{"first": first, "last": last, "diff": last - first}[agg]
			dps = append(dps, fmt.Sprintf(`"%s":%d`, k, v))
		}
		want := `"aggregateTags":["host","rack"],"dps":{` + strings.Join(dps, ",") + `}}]`
		path := q[:strings.Index(q, "&show_tsuids")] + "&m=" + url.QueryEscape(agg+":ord")
		_, firstBody := d.Get(t, path)
		if !strings.HasSuffix(firstBody, want) {
			t.Errorf("%s = %s\nwant it to end %s", path, firstBody, want)
		}
		for i := range 100 {
			if code, body := d.Get(t, path); code != 200 || body != firstBody {
				t.Fatalf("%s run %d = %d\n%s\nafter\n%s", path, i, code, body, firstBody)
			}
		}
	}
}
