package main

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// statusJSON is /api/status's answer, the fields these tests read.
type statusJSON struct {
	Mode  string `json:"mode"`
	Store struct {
		Engine      string `json:"engine"`
		Format      string `json:"format"`
		SaltWidth   int    `json:"salt_width"`
		SaltBuckets int    `json:"salt_buckets"`
		UIDWidths   struct {
			Metric int `json:"metric"`
			TagK   int `json:"tagk"`
			TagV   int `json:"tagv"`
		} `json:"uid_widths"`
		DataTable string `json:"data_table"`
	} `json:"store"`
	Retention []struct{ Pattern, Keep string } `json:"retention"`
	Rollups   []struct {
		Interval string `json:"interval"`
		Table    string `json:"table"`
	} `json:"rollups"`
	Head *struct {
		MaxMemory  int64 `json:"max_memory"`
		OldestHour int64 `json:"oldest_hour"`
	} `json:"head"`
	WAL *struct {
		Files         int    `json:"files"`
		Bytes         int64  `json:"bytes"`
		FsyncInterval string `json:"fsync_interval"`
	} `json:"wal"`
}

func (d *daemon) status(t *testing.T) statusJSON {
	t.Helper()
	code, body := d.Get(t, "/api/status")
	var st statusJSON
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("/api/status = %d %s (%v)", code, body, err)
	}
	return st
}

// TestStatusFromStoreRecord: /api/status reports the store's settings as
// its record holds them (a restart without the flags that made the store
// still shows them), its rollup tables, retention rules, head and log;
// /api/status/series the hours the index holds for a series.
func TestStatusFromStoreRecord(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.storage.salt.width=2", "--tsd.storage.salt.buckets=7",
		"--tsd.storage.uid.width.tagv=4", "--tsd.storage.format=opentsdb")
	base := time.Now().Add(-2*time.Hour).Unix() / 3600 * 3600
	d.putJSON(t, []map[string]any{{"metric": "m.one", "timestamp": base + 120, "value": 1, "tags": map[string]string{"h": "a"}}})
	st := d.status(t)
	if st.Head == nil || st.Head.OldestHour != base || st.WAL == nil || st.WAL.Files == 0 || st.WAL.Bytes == 0 {
		t.Errorf("head and log after a put: %+v %+v, want the oldest hour %d", st.Head, st.WAL, base)
	}
	if err := d.Stop(t); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, "--data", data, "--tsd.storage.retention=tmp.*:1d,*:forever")
	st = d.status(t)
	s := st.Store
	if st.Mode != "rw" || s.Engine != "pebble" || s.Format != "opentsdb" || s.SaltWidth != 2 || s.SaltBuckets != 7 ||
		s.UIDWidths.Metric != 3 || s.UIDWidths.TagK != 3 || s.UIDWidths.TagV != 4 || s.DataTable != "tsdb" {
		t.Errorf("/api/status after a restart without the store flags: %+v", st)
	}
	if len(st.Retention) != 2 || st.Retention[0].Pattern != "tmp.*" || st.Retention[0].Keep != "1d" || st.Retention[1].Keep != "forever" {
		t.Errorf("retention %+v", st.Retention)
	}
	if len(st.Rollups) != 3 || st.Rollups[1].Interval != "1h" || st.Rollups[1].Table != "tsdb-rollup-1h" {
		t.Errorf("rollups %+v", st.Rollups)
	}
	if st.WAL == nil || st.WAL.FsyncInterval != "1s" || st.Head == nil || st.Head.MaxMemory <= 0 {
		t.Errorf("head %+v, log %+v", st.Head, st.WAL)
	}
	// The series' hours, from the index.
	code, body := d.Get(t, "/api/search/tsuids?query=m.one&limit=1")
	var found struct{ Results []string }
	if err := json.Unmarshal([]byte(body), &found); code != 200 || err != nil || len(found.Results) != 1 {
		t.Fatalf("tsuids: %d %s", code, body)
	}
	code, body = d.Get(t, "/api/status/series?tsuid="+url.QueryEscape(found.Results[0]))
	var span struct {
		TSUID, Metric string
		Tags          map[string]string
		Known         bool
		First, Last   int64
	}
	if err := json.Unmarshal([]byte(body), &span); code != 200 || err != nil || span.Metric != "m.one" || span.Tags["h"] != "a" ||
		!span.Known || span.First != base || span.Last < base || !strings.EqualFold(span.TSUID, found.Results[0]) {
		t.Errorf("/api/status/series = %d %s, want the hour %d", code, body, base)
	}
	for q, want := range map[string]int{"tsuid=zz": 400, "tsuid=": 400, "tsuid=00000900000100000001": 404} {
		if code, body := d.Get(t, "/api/status/series?"+q); code != want {
			t.Errorf("/api/status/series?%s = %d %s, want %d", q, code, body, want)
		}
	}
}
