package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestDaemonQueryGexp: /api/query/gexp through the real binary. Points put
// over HTTP come back through scale (Scale.java: integers stay integers
// for an integral factor; this series holds a double, so /api/query
// answers doubles throughout) and alias (Alias.java: named from the template
// with @host filled, tags emptied, absolute values), divideSeries
// (DivideSeries.java: a UNION by tags, points paired by position, x/0 is
// 0, every point a double) and sumSeries's refusal of one series; a
// function OpenTSDB 2.4 lacks answers "Function X has not been
// implemented".
func TestDaemonQueryGexp(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir())
	put := `[{"metric":"gx.m","timestamp":1356998400,"value":4,"tags":{"host":"a"}},` +
		`{"metric":"gx.m","timestamp":1356998460,"value":-2.5,"tags":{"host":"a"}},` +
		`{"metric":"gx.d","timestamp":1356998400,"value":2,"tags":{"host":"a"}},` +
		`{"metric":"gx.d","timestamp":1356998460,"value":0,"tags":{"host":"a"}}]`
	if resp, body := post(t, "POST", "http://"+d.Addr+"/api/put?sync", []byte(put), false); resp.StatusCode != 204 {
		t.Fatalf("/api/put = %d %s", resp.StatusCode, body)
	}
	base := "/api/query/gexp?start=1356998400&end=1356998520&exp="
	for _, c := range []struct {
		exp  string
		code int
		want string
	}{
		{"scale(sum:gx.m{host=a},3)", 200,
			`[{"metric":"gx.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":12.0,"1356998460":-7.5}}]`},
		{"alias(sum:gx.m,cpu-@host)", 200,
			`[{"metric":"cpu-a","tags":{},"aggregateTags":[],"dps":{"1356998400":4.0,"1356998460":2.5}}]`},
		{"divideSeries(sum:gx.m,sum:gx.d)", 200,
			`[{"metric":"gx.m","tags":{"host":"a"},"aggregateTags":[],"dps":{"1356998400":2.0,"1356998460":0.0}}]`},
		{"sumSeries(sum:gx.m)", 400, `{"error":{"code":400,"message":"Must have 2 to 26 series, got 1 instead"`},
		{"firstDifference(sum:gx.m)", 400, `{"error":{"code":400,"message":"Function firstDifference has not been implemented"`},
	} {
		code, body := d.Get(t, base+url.QueryEscape(c.exp))
		if code != c.code || (code == 200 && body != c.want) || (code != 200 && !strings.HasPrefix(body, c.want)) {
			t.Errorf("%s = %d %s, want %d %s", c.exp, code, body, c.code, c.want)
		}
	}
}
