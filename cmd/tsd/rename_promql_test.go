package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestRenameSeenByPromQL: after /api/uid/rename, PromQL answers with the
// new metric name, although it had cached the series' labels under the
// old one.
func TestRenameSeenByPromQL(t *testing.T) {
	d := startDaemon(t, "--data="+t.TempDir())
	now := time.Now().Unix()
	body := fmt.Sprintf(`[{"metric":"renamable","timestamp":%d,"value":7,"tags":{"host":"a"}}]`, now)
	if resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/put?sync", []byte(body), false); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("put: %d %s", resp.StatusCode, out)
	}
	names := func(expr string) []string {
		t.Helper()
		code, out := d.Get(t, fmt.Sprintf("/api/v1/query?time=%d&query=%s", now, url.QueryEscape(expr)))
		if code != http.StatusOK {
			t.Fatalf("query %s: %d %s", expr, code, out)
		}
		var res struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("query %s: %v in %s", expr, err, out)
		}
		var ns []string
		for _, r := range res.Data.Result {
			ns = append(ns, r.Metric["__name__"])
		}
		return ns
	}
	if got := names(`{__name__="renamable"}`); len(got) != 1 || got[0] != "renamable" {
		t.Fatalf("before the rename: %v", got)
	}
	if resp, out := post(t, "POST", "http://"+d.Addr+"/api/uid/rename", []byte(`{"metric":"renamable","name":"renamed"}`), false); resp.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d %s", resp.StatusCode, out)
	}
	if got := names(`{__name__="renamed"}`); len(got) != 1 || got[0] != "renamed" {
		t.Fatalf("after the rename: %v, want the series as renamed", got)
	}
	if got := names(`{__name__="renamable"}`); len(got) != 0 {
		t.Fatalf("the old name still answers: %v", got)
	}
}
