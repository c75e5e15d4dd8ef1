package opentsdb_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/query/annotation"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
)

// TestQueryDeleteHead deletes part of an hour that is still in the head:
// the range is gone at once and after a flush, the rest of the hour stays,
// and a point written afterwards at a deleted timestamp is kept.
func TestQueryDeleteHead(t *testing.T) {
	s := openStack(t, opentsdb.Options{AllowDelete: true})
	fill(t, s) // sys.cpu's third hour, [t0+7200, t0+10800), is in the head
	from, to := int64(t0+7200+600), int64(t0+7200+1200)
	q := mquery(t, sec(from), sec(to), "sum:sys.cpu{host=web01}")
	q.Delete = true
	if got := s.exec(t, q); len(got) != 1 || len(got[0].DPS) != 11 {
		t.Fatalf("deleting query answered %+v", got)
	}
	check := func(when string, want int) {
		t.Helper()
		got := s.exec(t, mquery(t, sec(t0+7200), sec(t0+10800), "sum:sys.cpu{host=web01}"))
		n := 0
		for _, o := range got {
			for _, dp := range o.DPS {
				ts, _ := dp[0].(json.Number).Int64()
				if ts >= from && ts <= to {
					t.Fatalf("%s: point %d of the deleted range is back", when, ts)
				}
				n++
			}
		}
		if n != want {
			t.Fatalf("%s: %d points in the hour, want %d", when, n, want)
		}
	}
	// The whole hour goes, as its stored row would (OpenTSDB deletes every
	// row its scan read), whether or not it was flushed.
	check("before the flush", 0)
	s.flushAll(t)
	check("after the flush", 0)
	s.put(t, "sys.cpu", cpuSeries[0], series.IntPoint((from+60)*1000, 4242))
	got := s.execJSON(t, mquery(t, sec(from+60), sec(from+61), "sum:sys.cpu{host=web01}"))
	if !strings.Contains(got, `"`+sec(from+60)+`":4242`) {
		t.Fatalf("point written after the delete: %s", got)
	}
}

// TestQueryDefaultTimezone checks Options.Location (tsd.core.timezone):
// absolute dates and calendar days are Denver's unless the query names
// a zone.
func TestQueryDefaultTimezone(t *testing.T) {
	denver, err := tsquery.LoadLocation("America/Denver")
	if err != nil {
		t.Fatal(err)
	}
	// sys.cpu spans 2023-11-14 23:00Z to 2023-11-15 02:00Z: two UTC days,
	// one Denver day (midnight MST is 07:00Z).
	const q = "sum:1dc-count:sys.cpu{host=web01}"
	for _, c := range []struct {
		loc  *time.Location
		tz   string
		want string
	}{
		{nil, "", `{"1699920000":60.0,"1700006400":120.0}`},
		{denver, "", `{"1699945200":180.0}`},
		{denver, "UTC", `{"1699920000":60.0,"1700006400":120.0}`},
	} {
		s := openStack(t, opentsdb.Options{Location: c.loc})
		fill(t, s)
		mq := mquery(t, "2023/11/14", "2023/11/15-12:00", q)
		mq.Timezone = c.tz
		body := s.execJSON(t, mq)
		if !strings.Contains(body, `"dps":`+c.want+`}`) {
			t.Errorf("location %v, timezone %q: %s\nwant dps %s", c.loc, c.tz, body, c.want)
		}
	}
}

// TestQueryStatsShape checks showStats' per-result object and
// showSummary's trailing element: OpenTSDB's keys, sorted, numbers of the
// right kind, counts that match the answer.
func TestQueryStatsShape(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	fill(t, s)
	q := mquery(t, sec(t0), sec(t0+3600), "sum:sys.cpu{host=web01|web02}", "max:temp{host=*}")
	q.ShowStats, q.ShowSummary = true, true
	body := s.execJSON(t, q)
	var out []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out) != 5 {
		t.Fatalf("%d elements (%v): %s", len(out), err, body)
	}
	perResult := regexp.MustCompile(`^\{"aggregationTime":[0-9.E-]+,"dpsPostFilter":\d+,"emittedDPs":\d+,"groupByTime":[0-9.E-]+,` +
		`"queryIndex":\d,"queryScanTime":[0-9.E-]+,"serializationTime":[0-9.E-]+,"stringToUidTime":[0-9.E-]+,"table":"tsdb"\}$`)
	read, emitted := map[int]int{}, 0
	for i, o := range out[:4] {
		if !perResult.Match(o["stats"]) {
			t.Fatalf("result %d stats: %s", i, o["stats"])
		}
		var st struct{ EmittedDPs, DpsPostFilter, QueryIndex int }
		var dps map[string]any
		json.Unmarshal(o["stats"], &st)
		json.Unmarshal(o["dps"], &dps)
		if st.EmittedDPs != len(dps) || st.QueryIndex != i/2 || st.DpsPostFilter == 0 {
			t.Fatalf("result %d: stats %+v, %d dps", i, st, len(dps))
		}
		read[st.QueryIndex] = st.DpsPostFilter
		emitted += len(dps)
	}
	sum := string(out[4]["statsSummary"])
	summary := regexp.MustCompile(`^\{"avgAggregationTime":[0-9.E-]+,"avgQueryScanTime":[0-9.E-]+,"avgSerializationTime":[0-9.E-]+,` +
		`"dpsPostFilter":(\d+),"emittedDPs":(\d+),"maxAggregationTime":[0-9.E-]+,"maxQueryScanTime":[0-9.E-]+,"maxSerializationTime":[0-9.E-]+,` +
		`"processingPreWriteTime":[0-9.E-]+,"queryIdx_00":\{"aggregationTime".*"scannerStats":\{\},.*\},"queryIdx_01":\{.*\}\}$`)
	m := summary.FindStringSubmatch(sum)
	if m == nil || len(out[4]) != 1 {
		t.Fatalf("summary: %s", sum)
	}
	if m[1] != strconv.Itoa(read[0]+read[1]) || m[2] != strconv.Itoa(emitted) {
		t.Errorf("summary counts %s read, %s emitted; want %d, %d", m[1], m[2], read[0]+read[1], emitted)
	}
	// Without the flags, neither appears.
	plain := s.execJSON(t, mquery(t, sec(t0), sec(t0+3600), "sum:sys.cpu{host=web01}"))
	if strings.Contains(plain, "stats") {
		t.Errorf("stats without showStats: %s", plain)
	}
}

// TestQueryGroupTags checks a group's tags and aggregateTags as OpenTSDB
// 2.4's SpanGroup.computeTags derives them: a tag key is a tag of the
// group when no two members that have it disagree on its value, even if
// other members lack it; only a key with two values is aggregated.
func TestQueryGroupTags(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	for _, tags := range []map[string]string{
		{"host": "a", "dc": "x"},
		{"host": "b", "dc": "x", "rack": "r2"},
		{"host": "c"},
	} {
		s.put(t, "mix", tags, series.IntPoint(int64(t0)*1000, 1))
	}
	s.flushAll(t)
	for m, want := range map[string]string{
		// host differs; dc and rack each have one value where present.
		"sum:mix":                         `{"metric":"mix","tags":{"dc":"x","rack":"r2"},"aggregateTags":["host"],"dps":{"1700002800":3}}`,
		"sum:mix{dc=*}":                   `{"metric":"mix","tags":{"dc":"x","rack":"r2"},"aggregateTags":["host"],"dps":{"1700002800":2}}`,
		"sum:mix{}{host=literal_or(a|c)}": `{"metric":"mix","tags":{"dc":"x"},"aggregateTags":["host"],"dps":{"1700002800":2}}`,
		"sum:mix{host=c}":                 `{"metric":"mix","tags":{"host":"c"},"aggregateTags":[],"dps":{"1700002800":1}}`,
	} {
		if got := s.execJSON(t, mquery(t, sec(t0), sec(t0+60), m)); got != "["+want+"]" {
			t.Errorf("%s:\n got %s\nwant [%s]", m, got, want)
		}
	}
}

// TestQueryNotesOnlyMember: a series with an annotation but no point in
// the window brings its notes to its group but not its tags or TSUID, as
// OpenTSDB's SpanGroup.add keeps only the annotations of an empty span.
func TestQueryNotesOnlyMember(t *testing.T) {
	s := openStack(t, opentsdb.Options{})
	s.put(t, "nm", map[string]string{"host": "a", "dc": "x"}, series.IntPoint(int64(t0)*1000, 1))
	s.put(t, "nm", map[string]string{"host": "b", "dc": "y"}, series.IntPoint(int64(t0-7200)*1000, 2))
	s.flushAll(t)
	b := s.tsuidHex(t, s.raw[seriesName("nm", map[string]string{"host": "b", "dc": "y"})])
	a := s.tsuidHex(t, s.raw[seriesName("nm", map[string]string{"host": "a", "dc": "x"})])
	note := annotation.Annotation{TSUID: b, StartTime: t0 + 30, Description: "only a note", Given: annotation.FieldDescription}
	if _, err := s.notes.Put(context.Background(), &note, false); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"sum:nm", "sum:1m-sum:nm"} {
		q := mquery(t, sec(t0), sec(t0+60), m)
		q.ShowTSUIDs = true
		want := `[{"metric":"nm","tags":{"dc":"x","host":"a"},"aggregateTags":[],"tsuids":["` + a + `"],` +
			`"annotations":[{"tsuid":"` + b + `","description":"only a note","notes":"","startTime":1700002830,"endTime":0}],"dps":{"1700002800":`
		if got := s.execJSON(t, q); !strings.HasPrefix(got, want) {
			t.Errorf("%s:\n got %s\nwant %s...", m, got, want)
		}
	}
}
