package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestRetentionFilteredAtRead is issue 6 item 5's read side: points older
// than their metric's retention never show in a query, even before the
// retention job has deleted them, while other metrics keep theirs.
func TestRetentionFilteredAtRead(t *testing.T) {
	d := startDaemon(t, "--data="+t.TempDir(), "--tsd.storage.retention=old.*:1h,*:forever")
	now := time.Now().Unix()
	var pts []map[string]any
	for _, m := range []string{"old.m", "keep.m"} {
		for _, age := range []int64{3 * 3600, 2 * 3600, 600} {
			pts = append(pts, map[string]any{"metric": m, "timestamp": now - age, "value": age, "tags": map[string]string{"h": "a"}})
		}
	}
	body, _ := json.Marshal(pts)
	if resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/put?sync", body, false); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("put: %d %s", resp.StatusCode, out)
	}
	for _, tc := range []struct {
		metric string
		want   int
	}{{"old.m", 1}, {"keep.m", 3}} {
		code, out := d.Get(t, fmt.Sprintf("/api/query?start=%d&m=sum:%s", now-4*3600, tc.metric))
		if code != http.StatusOK {
			t.Fatalf("query %s: %d %s", tc.metric, code, out)
		}
		var res []struct {
			DPS map[string]float64 `json:"dps"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
			t.Fatalf("query %s: %v %s", tc.metric, err, out)
		}
		if len(res[0].DPS) != tc.want {
			t.Fatalf("query %s: %d points %v, want %d", tc.metric, len(res[0].DPS), res[0].DPS, tc.want)
		}
		if tc.want == 1 && res[0].DPS[fmt.Sprint(now-600)] != 600 {
			t.Fatalf("query %s kept the wrong point: %v", tc.metric, res[0].DPS)
		}
	}
}
