package main

import (
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// TestDaemonIngestConfiguredLimits proves tsd.storage.max_tags and
// tsd.core.tag.allow_specialchars reach every protocol's parser: with a
// limit of 2 tags, a 3-tag point is refused on each path in that
// protocol's error form while the good points beside it land.
func TestDaemonIngestConfiguredLimits(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.storage.max_tags=2", "--tsd.core.tag.allow_specialchars=!")
	base := "http://" + d.Addr

	got := telnetSession(t, d.Addr,
		"put lim.telnet 1356998400 1 a=1 b=2",
		"put lim.telnet 1356998401 2 a=1 b=2 c=3",
		"put lim!telnet 1356998402 3 a=1")
	if len(got) != 3 || got[0] != "put: illegal argument: Too many tags: 3 maximum allowed: 2, tags: {a=1, b=2, c=3}" {
		t.Errorf("telnet replies %q", got)
	}

	resp, body := post(t, "POST", base+"/api/put?details", []byte(
		`[{"metric":"lim.put","timestamp":1356998400,"value":1,"tags":{"a":"1","b":"2"}},`+
			`{"metric":"lim.put","timestamp":1356998401,"value":2,"tags":{"a":"1","b":"2","c":"3"}},`+
			`{"metric":"lim!put","timestamp":1356998402,"value":3,"tags":{"a":"1"}}]`), false)
	// Every tag is listed, and the point is echoed in OpenTSDB's datapoint
	// form (the value a string), not as sent.
	if resp.StatusCode != 400 || !strings.HasPrefix(body, `{"success":2,"failed":1,"errors":[{"datapoint":{"metric":"lim.put","timestamp":1356998401`) ||
		!strings.Contains(body, `{"datapoint":{"metric":"lim.put","timestamp":1356998401,"value":"2","tags":{"a":"1","b":"2","c":"3"}},`+
			`"error":"Too many tags: 3 maximum allowed: 2, tags: {a=1, b=2, c=3}"}`) {
		t.Errorf("/api/put 3 tags = %d %s", resp.StatusCode, body)
	}

	lp := "lim,a=1,b=2 v=1 1356998400\nlim,a=1,b=2,c=3 v=2 1356998401\n"
	resp, body = post(t, "POST", base+"/write?db=x&precision=s", []byte(lp), false)
	if resp.StatusCode != 400 || !strings.HasPrefix(body, `{"error":"partial write: `) ||
		!strings.Contains(body, "too many tags: more than 2") || !strings.Contains(body, "dropped=1") {
		t.Errorf("/write 3 tags = %d %s", resp.StatusCode, body)
	}
	lp2 := "lim2,a=1,b=2 v=1 1356998400\nlim2,a=1,b=2,c=3 v=2 1356998401\n"
	resp, body = post(t, "POST", base+"/api/v2/write?org=o&bucket=b&precision=s", []byte(lp2), true)
	if resp.StatusCode != 400 || !strings.HasPrefix(body, `{"code":"invalid","message":"partial write: `) ||
		!strings.Contains(body, "too many tags: more than 2") {
		t.Errorf("/api/v2/write 3 tags = %d %s", resp.StatusCode, body)
	}

	series := func(name string, labels ...string) prompb.TimeSeries {
		ls := []prompb.Label{{Name: "__name__", Value: name}}
		for _, l := range labels {
			ls = append(ls, prompb.Label{Name: l, Value: "1"})
		}
		return prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: 1, Timestamp: 1356998400000}}}
	}
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		series("lim_rw", "a", "b"), series("lim_rw_bad", "a", "b", "c")}}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf", "Content-Encoding", "snappy")
	if resp.StatusCode != 400 || !strings.Contains(body, "too many labels: more than 2 besides __name__") ||
		!strings.Contains(body, "lim_rw_bad") {
		t.Errorf("remote_write 3 labels = %d %s", resp.StatusCode, body)
	}

	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	for metric, want := range map[string][]string{
		"lim.telnet": {"1356998400000 1 int"},
		"lim!telnet": {"1356998402000 3 int"},
		"lim.put":    {"1356998400000 1 int"},
		"lim!put":    {"1356998402000 3 int"},
		"lim_v":      {"1356998400000 1 float64"},
		"lim2_v":     {"1356998400000 1 float64"},
		"lim_rw":     {"1356998400000 1 float64"},
	} {
		equalLines(t, metric, scanPoints(t, data, metric), want)
	}
	// The refused series never reached the UID table.
	if code, _, errs := tsdScan(t, data, "1356998400", "1893456000", "lim_rw_bad"); code == exitOK ||
		!strings.Contains(errs, "No such name for 'metrics': 'lim_rw_bad'") {
		t.Errorf("tsd scan lim_rw_bad: exit %d %s", code, errs)
	}
}

// TestDaemonLongNamesAreBadData: a metric name, tag key or tag value over
// 4,096 bytes is bad data on every protocol: 400 (telnet: its error line)
// naming the field, never a 503 that senders retry for ever, and the good
// points of the same request land.
func TestDaemonLongNamesAreBadData(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	base := "http://" + d.Addr
	long := strings.Repeat("n", 4097)
	fields := []string{"metric name of 4097 bytes exceeds 4096", "tag name of 4097 bytes exceeds 4096",
		"tag value of 4097 bytes exceeds 4096"}

	got := telnetSession(t, d.Addr,
		"put ln.telnet 1356998400 1 host=a",
		"put "+long+" 1356998401 2 host=a",
		"put ln.telnet 1356998402 3 "+long+"=a",
		"put ln.telnet 1356998403 4 host="+long,
		"put ln.telnet 1356998404 5 host=a")
	if len(got) != 5 {
		t.Fatalf("telnet replies %q", got)
	}
	for i, f := range fields {
		if !strings.HasPrefix(got[i], "put: illegal argument: ") || !strings.Contains(got[i], f) {
			t.Errorf("telnet reply %d = %.200q, want an illegal argument naming %q", i, got[i], f)
		}
	}

	put := `[{"metric":"ln.put","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"` + long + `","timestamp":1356998401,"value":2,"tags":{"host":"a"}},` +
		`{"metric":"ln.put","timestamp":1356998402,"value":3,"tags":{"` + long + `":"a"}},` +
		`{"metric":"ln.put","timestamp":1356998403,"value":4,"tags":{"host":"` + long + `"}},` +
		`{"metric":"ln.put","timestamp":1356998404,"value":5,"tags":{"host":"a"}}]`
	resp, body := post(t, "POST", base+"/api/put?details", []byte(put), false)
	if resp.StatusCode != 400 || !strings.HasPrefix(body, `{"success":2,"failed":3,`) || resp.Header.Get("Retry-After") != "" {
		t.Errorf("/api/put = %d %.300s", resp.StatusCode, body)
	}
	for _, f := range fields {
		if !strings.Contains(body, f) {
			t.Errorf("/api/put answer does not name %q", f)
		}
	}

	for _, path := range []string{"/write?db=x&precision=s", "/api/v2/write?org=o&bucket=b&precision=s"} {
		m := "ln_w1"
		if strings.HasPrefix(path, "/api/v2") {
			m = "ln_w2"
		}
		lp := m + ",host=a v=1 1356998400\n" + long + ",host=a v=2 1356998401\n" + m + "," + long + "=a v=3 1356998402\n" +
			m + ",host=" + long + " v=4 1356998403\n" + m + ",host=a v=5 1356998404\n"
		resp, body = post(t, "POST", base+path, []byte(lp), false)
		if resp.StatusCode != 400 || !strings.Contains(body, "partial write: ") || !strings.Contains(body, "dropped=3") ||
			resp.Header.Get("Retry-After") != "" {
			t.Errorf("%s = %d %.300s", path, resp.StatusCode, body)
		}
		for _, f := range []string{"metric name of 4099 bytes exceeds 4096", fields[1], fields[2]} {
			if !strings.Contains(body, f) {
				t.Errorf("%s answer does not name %q", path, f)
			}
		}
	}

	ts := func(labels []string, ms int64, v float64) prompb.TimeSeries {
		var ls []prompb.Label
		for i := 0; i+1 < len(labels); i += 2 {
			ls = append(ls, prompb.Label{Name: labels[i], Value: labels[i+1]})
		}
		return prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: v, Timestamp: ms}}}
	}
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		ts([]string{"__name__", "ln_rw", "host", "a"}, 1356998400000, 1),
		ts([]string{"__name__", long, "host", "a"}, 1356998401000, 2),
		ts([]string{"__name__", "ln_rw", long, "a"}, 1356998402000, 3),
		ts([]string{"__name__", "ln_rw", "host", long}, 1356998403000, 4),
		ts([]string{"__name__", "ln_rw", "host", "a"}, 1356998404000, 5),
	}}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf", "Content-Encoding", "snappy")
	if resp.StatusCode != 400 || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "2" ||
		resp.Header.Get("Retry-After") != "" {
		t.Errorf("remote_write = %d %v %.300s", resp.StatusCode, resp.Header, body)
	}
	for _, f := range fields {
		if !strings.Contains(body, f) {
			t.Errorf("remote_write answer does not name %q", f)
		}
	}

	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	for metric, want := range map[string][]string{
		"ln.telnet": {"1356998400000 1 int", "1356998404000 5 int"},
		"ln.put":    {"1356998400000 1 int", "1356998404000 5 int"},
		"ln_w1_v":   {"1356998400000 1 float64", "1356998404000 5 float64"},
		"ln_w2_v":   {"1356998400000 1 float64", "1356998404000 5 float64"},
		"ln_rw":     {"1356998400000 1 float64", "1356998404000 5 float64"},
	} {
		equalLines(t, metric, scanPoints(t, data, metric), want)
	}
}

// TestDaemonSeriesLimits: with tsd.core.max_hourly_series=6 and
// tsd.core.max_series_per_metric=3, a point of a series new to a full
// limit is refused with 400 (telnet: its error line) naming the key, on
// every protocol, while points of known series beside it land; the
// refusals are counted in /metrics by limit; a refused series never gets
// a UID.
func TestDaemonSeriesLimits(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.core.max_hourly_series=6", "--tsd.core.max_series_per_metric=3")
	base := "http://" + d.Addr
	const perMetric, hourly = "tsd.core.max_series_per_metric", "tsd.core.max_hourly_series"

	// Per metric: card.pm's fourth series is refused; 3 series in the hour.
	put := `[{"metric":"card.pm","timestamp":1356998400,"value":1,"tags":{"host":"a"}},` +
		`{"metric":"card.pm","timestamp":1356998400,"value":2,"tags":{"host":"b"}},` +
		`{"metric":"card.pm","timestamp":1356998400,"value":3,"tags":{"host":"c"}},` +
		`{"metric":"card.pm","timestamp":1356998400,"value":4,"tags":{"host":"d"}},` +
		`{"metric":"card.pm","timestamp":1356998401,"value":5,"tags":{"host":"a"}}]`
	resp, body := post(t, "POST", base+"/api/put?details", []byte(put), false)
	if resp.StatusCode != 400 || resp.Header.Get("Retry-After") != "" || !strings.HasPrefix(body, `{"success":4,"failed":1,`) ||
		!strings.Contains(body, `new series refused: metric \"card.pm\" has 3 series, the most `+perMetric+` allows`) {
		t.Errorf("/api/put = %d %s", resp.StatusCode, body)
	}
	// The hour: three more series fill it, the next new one is refused.
	resp, body = post(t, "POST", base+"/write?db=x&precision=s", []byte("card,host=a v=1 1356998400\n"), false)
	if resp.StatusCode != 204 {
		t.Errorf("/write = %d %s", resp.StatusCode, body)
	}
	got := telnetSession(t, d.Addr,
		"put card.h1 1356998400 1 host=a",
		"put card.h2 1356998400 2 host=a",
		"put card.h3 1356998400 3 host=a",
		"put card.pm 1356998402 6 host=b")
	if len(got) != 3 || !strings.HasPrefix(got[0], "put: illegal argument: new series refused: 6 series were written in the last hour, the most "+hourly+" allows") {
		t.Errorf("telnet replies %q", got)
	}
	lp := "card,host=a v=2 1356998401\ncard,host=b v=3 1356998401\n"
	resp, body = post(t, "POST", base+"/write?db=x&precision=s", []byte(lp), false)
	if resp.StatusCode != 400 || !strings.Contains(body, "partial write: new series refused: ") ||
		!strings.Contains(body, hourly) || !strings.Contains(body, "dropped=1") {
		t.Errorf("/write = %d %s", resp.StatusCode, body)
	}
	wr := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: []prompb.Label{{Name: "__name__", Value: "card_rw"}, {Name: "host", Value: "a"}},
			Samples: []prompb.Sample{{Value: 1, Timestamp: 1356998400000}}},
		{Labels: []prompb.Label{{Name: "__name__", Value: "card.h1"}, {Name: "host", Value: "a"}},
			Samples: []prompb.Sample{{Value: 8, Timestamp: 1356998404000}}},
	}}
	raw, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	resp, body = post(t, "POST", base+"/api/v1/write", snappy.Encode(nil, raw), false,
		"Content-Type", "application/x-protobuf", "Content-Encoding", "snappy")
	if resp.StatusCode != 400 || !strings.Contains(body, hourly) ||
		resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "1" {
		t.Errorf("remote_write = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	code, metrics := d.Get(t, "/metrics")
	for _, want := range []string{
		`tsd_ingest_series_limit_refused_total{limit="` + hourly + `"} 3`,
		`tsd_ingest_series_limit_refused_total{limit="` + perMetric + `"} 1`,
		`tsd_ingest_series_limit_refused_total{limit="tsd.core.max_daily_series"} 0`,
		`tsd_ingest_series_limit_series{window="hour"} 6`,
	} {
		if code != 200 || !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	for metric, want := range map[string][]string{
		"card.pm": {"1356998400000 1 int", "1356998401000 5 int", "1356998400000 2 int", "1356998402000 6 int",
			"1356998400000 3 int"},
		"card_v":  {"1356998400000 1 float64", "1356998401000 2 float64"},
		"card.h1": {"1356998400000 1 int", "1356998404000 8 float64"},
	} {
		equalLines(t, metric, scanPoints(t, data, metric), want)
	}
	for _, m := range []string{"card.h3", "card_rw"} {
		if code, _, errs := tsdScan(t, data, "1356998400", "1893456000", m); code == exitOK ||
			!strings.Contains(errs, "No such name for 'metrics': '"+m+"'") {
			t.Errorf("tsd scan %s: exit %d %s", m, code, errs)
		}
	}
}
