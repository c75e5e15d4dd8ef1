package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// treeRulesJSON is OpenTSDB's TestTree.buildTestRuleSet as the body of
// POST /api/tree/rules (docs api_http/tree/rules).
const treeRulesJSON = `[
 {"treeId":1,"level":0,"order":0,"type":"TAGK","field":"fqdn","regex":"^.*\\.([a-zA-Z]{3,4})[0-9]{0,1}\\..*\\..*$","description":"Datacenter"},
 {"treeId":1,"level":0,"order":1,"type":"TAGK","field":"host","regex":"^.*\\.([a-zA-Z]{3,4})[0-9]{0,1}\\..*\\..*$","description":"Datacenter"},
 {"treeId":1,"level":1,"order":0,"type":"TAGK","field":"fqdn","regex":"^([a-zA-Z]+)(\\-|[0-9])*.*\\..*$","description":"Service"},
 {"treeId":1,"level":1,"order":1,"type":"TAGK","field":"host","regex":"^([a-zA-Z]+)(\\-|[0-9])*.*\\..*$","description":"Service"},
 {"treeId":1,"level":2,"order":0,"type":"TAGK","field":"fqdn","description":"Hostname"},
 {"treeId":1,"level":2,"order":1,"type":"TAGK","field":"host","description":"Hostname"},
 {"treeId":1,"level":3,"order":0,"type":"METRIC","separator":"\\.","description":"Metric split"},
 {"treeId":1,"level":4,"order":0,"type":"TAGK","field":"type","description":"Type Tag"},
 {"treeId":1,"level":4,"order":1,"type":"TAGK","field":"method","description":"Method Tag"},
 {"treeId":1,"level":4,"order":2,"type":"TAGK","field":"port","description":"Port Tag","displayFormat":"Port: {value}"}]`

// deepBranch is the branch TestTreeBuilder.processTimeseriesMetaDefaults
// expects for sys.cpu.0 host=web-01.lga.mysite.com: ROOT/lga/web/
// web-01.lga.mysite.com/sys/cpu/0 (each 4 bytes the Java hash of a name).
const deepBranch = "00010001A2460001CB54247F72020001BECD000181A800000030"

// TestDaemonTrees: /api/tree and its sub-endpoints through the real
// binary on both engines, with tsd.core.tree.enable_processing: a tree
// and OpenTSDB's test rule set made over HTTP, new series filed in the
// branches OpenTSDB's TreeBuilder tests expect, a collision and a strict
// tree's not-matched series recorded, OpenTSDB's error answers, deletes,
// and tsd tree sync filing the series again after the branches are gone.
func TestDaemonTrees(t *testing.T) {
	t.Parallel() // its own daemon
	for _, engine := range []string{"pebble", "bigtable"} {
		t.Run(engine, func(t *testing.T) { testDaemonTrees(t, engine) })
	}
}

// treeCall sends a request and returns its status and body.
func (d *daemon) treeCall(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	resp, out := post(t, method, "http://"+d.Addr+path, []byte(body), false)
	return resp.StatusCode, out
}

func (d *daemon) wantTree(t *testing.T, method, path, body string, code int, contains ...string) string {
	t.Helper()
	got, out := d.treeCall(t, method, path, body)
	if got != code {
		t.Errorf("%s %s = %d %s, want %d", method, path, got, out, code)
	}
	for _, c := range contains {
		if !strings.Contains(out, c) {
			t.Errorf("%s %s = %s, want it to hold %s", method, path, out, c)
		}
	}
	return out
}

// waitFiled polls /api/stats until the tree processor has filed n series
// (a liveness guard, not a timing: it returns as soon as they are).
func (d *daemon) waitFiled(t *testing.T, n float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, body := d.Get(t, "/api/stats")
		var stats []struct {
			Metric string  `json:"metric"`
			Value  float64 `json:"value,string"`
		}
		if err := json.Unmarshal([]byte(body), &stats); err != nil {
			t.Fatalf("stats: %v: %s", err, body)
		}
		for _, s := range stats {
			if s.Metric == "tsd.tree.processed" && s.Value >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("tree processor did not file %v series: %s", n, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tsuidOf returns the TSUID of the series of m with exactly tags tags
// (a lookup also finds the series with more).
func (d *daemon) tsuidOf(t *testing.T, m string, tags int) string {
	t.Helper()
	_, body := d.Get(t, "/api/uid/tsmeta?m="+m)
	var list []map[string]any
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("tsmeta %s: %s (%v)", m, body, err)
	}
	for _, e := range list {
		if len(e["tags"].([]any)) == 2*tags {
			return e["tsuid"].(string)
		}
	}
	t.Fatalf("tsmeta %s: no series with %d tags: %s", m, tags, body)
	return ""
}

func testDaemonTrees(t *testing.T, engine string) {
	dir := t.TempDir()
	args := []string{"--data=" + dir, "--tsd.core.tree.enable_processing=true"}
	run, tool := startDaemon, runTSD
	if engine == "bigtable" {
		e := startBTEmulator(t)
		run, tool = e.start, e.tool
		args = append(args, btFlags...)
	}
	d := run(t, args...)

	// Definitions (docs api_http/tree/index).
	d.wantTree(t, "GET", "/api/tree", "", 200, "[]")
	d.wantTree(t, "POST", "/api/tree", `{"name":"Test Tree","description":"My Description","notes":"Details","enabled":true}`, 200,
		`"name":"Test Tree"`, `"rules":null`, `"treeId":1`, `"enabled":true`, `"strictMatch":false`)
	d.wantTree(t, "POST", "/api/tree", `{"description":"no name"}`, 400, `"message":"Tree was missing the name"`)
	d.wantTree(t, "GET", "/api/tree?treeid=2", "", 404, `"message":"Unable to locate tree: 2"`)
	d.wantTree(t, "GET", "/api/tree?treeid=655536", "", 400, `"message":"Invalid Tree ID"`)
	d.wantTree(t, "GET", "/api/tree?treeid=x", "", 400, `"message":"Unable to parse 'tree' value"`)
	d.wantTree(t, "POST", "/api/tree?treeid=1", "", 304)
	// A state-changing GET is refused (tsd.http.allow_state_changing_get).
	d.wantTree(t, "GET", "/api/tree?treeid=1&description=x&method_override=post", "", 405)
	d.wantTree(t, "GET", "/api/tree/nosuch", "", 404, "This endpoint is not supported")

	// Rules (docs api_http/tree/rule and rules).
	d.wantTree(t, "POST", "/api/tree/rules", treeRulesJSON, 204)
	d.wantTree(t, "GET", "/api/tree/rule?treeid=1&level=4&order=2", "", 200,
		`{"type":"TAGK","field":"port","regex":"","separator":"","description":"Port Tag","notes":"","level":4,"order":2,"treeId":1,"customField":"","regexGroupIdx":0,"displayFormat":"Port: {value}"}`)
	d.wantTree(t, "GET", "/api/tree/rule?treeid=1&level=9&order=9", "", 404, `"message":"Unable to locate rule: [1:9:9:null]"`)
	d.wantTree(t, "GET", "/api/tree/rule?treeid=1&order=0", "", 400, `"message":"Missing parameter <code>level</code>"`)
	d.wantTree(t, "POST", "/api/tree/rule?treeid=1&level=1&order=0", "", 304)
	d.wantTree(t, "POST", "/api/tree/rule?treeid=1&level=5&order=0&description=x", "", 400, `"message":"Missing rule type"`)
	d.wantTree(t, "POST", "/api/tree/rule", `{"treeId":1,"level":1,"order":0,"notes":"Service rule"}`, 200,
		`"notes":"Service rule"`, `"description":"Service"`)
	d.wantTree(t, "GET", "/api/tree?treeid=1", "", 200, `"rules":{"0":{"0":{"type":"TAGK","field":"fqdn"`, `"4":{"0":`)

	// New series are filed as OpenTSDB's TreeBuilder files them.
	d.putJSON(t, []map[string]any{{"metric": "sys.cpu.0", "timestamp": 1700000000, "value": 1,
		"tags": map[string]string{"host": "web-01.lga.mysite.com", "type": "user"}}})
	d.waitFiled(t, 1)
	tsuid1 := d.tsuidOf(t, "sys.cpu.0%7Bhost=web-01.lga.mysite.com,type=user%7D", 2)
	d.wantTree(t, "GET", "/api/tree/branch?branch="+deepBranch, "", 200,
		`"leaves":[{"metric":"sys.cpu.0","tags":{"host":"web-01.lga.mysite.com","type":"user"},"tsuid":"`+tsuid1+`","displayName":"user"}]`,
		`"path":{"0":"ROOT","1":"lga","2":"web","3":"web-01.lga.mysite.com","4":"sys","5":"cpu","6":"0"}`, `"depth":6`)
	d.wantTree(t, "GET", "/api/tree/branch?treeid=1", "", 200,
		`{"leaves":null,"branches":[{"leaves":null,"branches":null,"path":{"0":"ROOT","1":"lga"},"treeId":1,"displayName":"lga","branchId":"00010001A246","depth":1}],"path":{"0":"ROOT"},"treeId":1,"displayName":"ROOT","branchId":"0001","depth":0}`)
	d.wantTree(t, "GET", "/api/tree/branch?branch=00010001BBBB", "", 404, `"message":"Unable to locate branch '00010001BBBB' for tree '1'"`)
	d.wantTree(t, "GET", "/api/tree/branch", "", 400, `"message":"Missing or invalid branch and tree IDs"`)
	d.wantTree(t, "POST", "/api/tree/branch?treeid=1", "", 400, `"message":"Unsupported HTTP request method"`)

	// /test runs the rules without writing (docs api_http/tree/test).
	d.wantTree(t, "GET", "/api/tree/test?treeid=1&tsuids="+tsuid1+",000009000009000009", "", 200,
		`{"`+tsuid1+`":{"branch":{"leaves":null,"branches":[{"leaves":null,"branches":[`,
		`"meta":{"tsuid":"`+tsuid1+`"`, `"Processing rule: [1:0:0:TAGK]"`, `"No match on tagk [fqdn] for rule: [1:0:0:TAGK]"`,
		`"Depth [8] Adding leaf [name: user tsuid: `+tsuid1+`] to parent branch [Name: [0]]"`,
		`"000009000009000009":{"branch":null,"meta":null,"messages":["Unable to locate TSUID meta data"]}`)
	d.wantTree(t, "POST", "/api/tree/test", `{"treeId":1,"tsuids":[]}`, 400, `"message":"Missing or empty TSUID list"`)
	d.wantTree(t, "GET", "/api/tree/test?treeid=7&tsuids=01", "", 404, `"message":"Unable to locate tree: 7"`)

	// A second series with the same display names collides; a strict
	// tree refuses a series without a type tag.
	d.wantTree(t, "POST", "/api/tree", `{"treeId":1,"storeFailures":true,"strictMatch":true}`, 200, `"storeFailures":true`, `"strictMatch":true`)
	d.putJSON(t, []map[string]any{
		{"metric": "sys.cpu.0", "timestamp": 1700000000, "value": 1, "tags": map[string]string{"host": "web-01.lga.mysite.com", "type": "user", "x": "y"}},
	})
	d.waitFiled(t, 2)
	d.putJSON(t, []map[string]any{
		{"metric": "sys.cpu.0", "timestamp": 1700000000, "value": 1, "tags": map[string]string{"host": "web-01.lga.mysite.com"}},
	})
	d.waitFiled(t, 3)
	tsuid2 := d.tsuidOf(t, "sys.cpu.0%7Bhost=web-01.lga.mysite.com,type=user,x=y%7D", 3)
	tsuid3 := d.tsuidOf(t, "sys.cpu.0%7Bhost=web-01.lga.mysite.com%7D", 1)
	d.wantTree(t, "GET", "/api/tree/collisions?treeid=1", "", 200, `{"`+tsuid2+`":"`+tsuid1+`"}`)
	d.wantTree(t, "POST", "/api/tree/collisions", `{"treeId":1,"tsuids":["`+tsuid1+`"]}`, 200, `{}`)
	d.wantTree(t, "GET", "/api/tree/notmatched?treeid=1&tsuids="+tsuid3, "", 200, `{"`+tsuid3+`":"[1:4:2:TAGK]"}`)

	// Deleting the branches keeps the definition and rules.
	d.wantTree(t, "DELETE", "/api/tree?treeid=1", "", 204)
	d.wantTree(t, "GET", "/api/tree/branch?treeid=1", "", 404, `"message":"Unable to locate branch '0001' for tree '1'"`)
	d.wantTree(t, "GET", "/api/tree/collisions?treeid=1", "", 200, `{}`)
	d.wantTree(t, "GET", "/api/tree/rule?treeid=1&level=4&order=2", "", 200, `"field":"port"`)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}

	// tsd tree sync files every series again.
	syncArgs := append([]string{"tree", "sync"}, args...)
	out, code := tool(t, syncArgs...)
	if code != 0 || !strings.Contains(out, "tree sync: 1 trees, 3 series filed, 0 errors") {
		t.Fatalf("tsd tree sync = %d:\n%s", code, out)
	}
	d = run(t, args...)
	d.wantTree(t, "GET", "/api/tree/branch?branch="+deepBranch, "", 200, `"displayName":"user"`)
	d.wantTree(t, "GET", "/api/tree/collisions?treeid=1", "", 200, `"`+tsuid2+`":"`+tsuid1+`"`)

	// With the definition, the tree is gone.
	d.wantTree(t, "DELETE", "/api/tree", `{"treeId":1,"definition":true}`, 204)
	d.wantTree(t, "GET", "/api/tree?treeid=1", "", 404)
	d.wantTree(t, "GET", "/api/tree", "", 200, "[]")
}
