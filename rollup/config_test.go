package rollup

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if len(c.Intervals) != 3 {
		t.Fatalf("%d intervals", len(c.Intervals))
	}
	for i, want := range []struct {
		table, pre, name string
		sec              int64
		unit             byte
		count            int
		def              bool
	}{
		{"tsdb", "tsdb-preagg", "1m", 60, 'h', 60, true},
		{"tsdb-rollup-1h", "tsdb-rollup-preagg-1h", "1h", 3600, 'd', 24, false},
		{"tsdb-rollup-1d", "tsdb-rollup-preagg-1d", "1d", 86400, 'n', 32, false},
	} {
		iv := c.Intervals[i]
		if iv.Table != want.table || iv.PreAggTable != want.pre || iv.Name != want.name || iv.Seconds != want.sec ||
			iv.Unit != want.unit || iv.Count != want.count || iv.Default != want.def {
			t.Errorf("interval %d: %+v, want %+v", i, iv, want)
		}
	}
	if ids := c.IDs(); ids != (AggIDs{0, 1, 2, 3}) {
		t.Errorf("ids %v", ids)
	}
	if iv, pre, ok := c.ByTable("tsdb-rollup-preagg-1h"); !ok || !pre || iv.Name != "1h" {
		t.Errorf("ByTable: %v %v %v", iv, pre, ok)
	}
	if iv, ok := c.ByName("1d"); !ok || iv.Table != "tsdb-rollup-1d" {
		t.Errorf("ByName: %v %v", iv, ok)
	}
	if c.Default().Name != "1m" || c.AggName(2) != "min" || c.AggName(9) != "" {
		t.Error("Default or AggName")
	}
	// Round trip through MarshalJSON.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := ParseConfig(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for i := range c.Intervals {
		if !c.Intervals[i].Equal(&c2.Intervals[i]) {
			t.Errorf("round trip %d: %v != %v", i, c.Intervals[i].String(), c2.Intervals[i].String())
		}
	}
}

// TestConfigErrors feeds OpenTSDB's validation rules one at a time; every
// error must name the field.
func TestConfigErrors(t *testing.T) {
	iv := func(fields string) string {
		return `{"aggregationIds":{"sum":0},"intervals":[{"table":"t","preAggregationTable":"p",` + fields + `}]}`
	}
	for _, tc := range []struct {
		doc, field, msg string
	}{
		{`{"aggregationIds":{"sum":0},"intervals":[]}`, "intervals", "no intervals"},
		{`{"aggregationIds":{},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds", "no aggregation"},
		{iv(`"interval":"1h","rowSpan":"1d"`)[:20], "(document)", ""},
		{`{"aggregationIds":{"sum":128},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.sum", "between 0 and 127"},
		{`{"aggregationIds":{"sum":-1},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.sum", "between 0 and 127"},
		{`{"aggregationIds":{"sum":1,"max":1},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.sum", "multiple mappings"},
		{`{"aggregationIds":{"bogus":1},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.bogus", "no such aggregator"},
		{`{"aggregationIds":{"squareSum":1},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.squaresum", "no such aggregator"},
		{`{"aggregationIds":{"sum":"0"},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "aggregationIds.sum", "not an integer"},
		{`{"aggregationIds":{"sum":0},"intervals":[{"preAggregationTable":"p","interval":"1h","rowSpan":"1d"}]}`, "intervals[0].table", "missing"},
		{`{"aggregationIds":{"sum":0},"intervals":[{"table":"t","interval":"1h","rowSpan":"1d"}]}`, "intervals[0].preAggregationTable", "missing"},
		{iv(`"rowSpan":"1d"`), "intervals[0].interval", "missing"},
		{iv(`"interval":"1h"`), "intervals[0].rowSpan", "missing"},
		{iv(`"interval":"1h","rowSpan":"2d"`), "intervals[0].rowSpan", "only usable with the 'h' unit"},
		{iv(`"interval":"1m","rowSpan":"3h"`), "intervals[0].rowSpan", "1 or an even value"},
		{iv(`"interval":"1m","rowSpan":"1w"`), "intervals[0].rowSpan", "unrecognized span unit"},
		{iv(`"interval":"1m","rowSpan":"100ms"`), "intervals[0].rowSpan", "milliseconds"},
		{iv(`"interval":"1x","rowSpan":"1h"`), "intervals[0].interval", "invalid unit"},
		{iv(`"interval":"500ms","rowSpan":"1h"`), "intervals[0].interval", "below one second"},
		{iv(`"interval":"1h","rowSpan":"1h"`), "intervals[0].interval", "too large for the span"},
		{iv(`"interval":"10m","rowSpan":"1h"`), "intervals[0].interval", "not enough intervals [6]"},
		{iv(`"interval":"10s","rowSpan":"1d"`), "intervals[0].interval", "too many intervals [8640]"},
		{iv(`"interval":"1h","rowSpan":"1d","delaySla":"5ms"`), "intervals[0].delaySla", "milliseconds"},
		{iv(`"interval":"1h","rowSpan":"1d","defaultInterval":"yes"`), "intervals[0]", "bool"},
		{`{"aggregationIds":{"sum":0},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d","defaultInterval":true},` +
			`{"table":"t2","preAggregationTable":"p2","interval":"1m","rowSpan":"1h","defaultInterval":true}]}`, "intervals[1].defaultInterval", "multiple default"},
		{`{"aggregationIds":{"sum":0},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"},` +
			`{"table":"t2","preAggregationTable":"p2","interval":"1h","rowSpan":"1n"}]}`, "intervals[1].interval", "only one interval of each type"},
		{`{"aggregationIds":{"sum":0},"intervals":[{"table":"t","preAggregationTable":"p","interval":"1h","rowSpan":"1d"},` +
			`{"table":"t","preAggregationTable":"p2","interval":"1d","rowSpan":"1n"}]}`, "intervals[1].table", "also a table"},
	} {
		_, err := ParseConfig([]byte(tc.doc))
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want a *ConfigError", tc.doc, err)
			continue
		}
		if ce.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want field %s and %q", tc.doc, err, tc.field, tc.msg)
		}
	}
}

// TestConfigBounds takes OpenTSDB's own accepted extremes.
func TestConfigBounds(t *testing.T) {
	for _, tc := range []struct {
		interval, span string
		count          int
	}{
		{"1s", "1h", 3600},
		{"5m", "1h", 12},
		{"20s", "2d"[:0] + "1d", 4320},
		{"10m", "1d", 144},
		{"1h", "1n", 768},
		{"1d", "1y", 366},
		{"1s", "2h", 7200},
		{"30m", "6h", 12},
	} {
		doc := `{"aggregationIds":{"SUM":0},"intervals":[{"table":"t","preAggregationTable":"p","interval":"` + tc.interval + `","rowSpan":"` + tc.span + `","unknownField":1}]}`
		c, err := ParseConfig([]byte(doc))
		if err != nil {
			t.Errorf("%s in %s: %v", tc.interval, tc.span, err)
			continue
		}
		if c.Intervals[0].Count != tc.count {
			t.Errorf("%s in %s: count %d, want %d", tc.interval, tc.span, c.Intervals[0].Count, tc.count)
		}
		if id, ok := c.AggID("Sum"); !ok || id != 0 {
			t.Errorf("aggregator names are case-insensitive: %d %v", id, ok)
		}
	}
}

func TestExtends(t *testing.T) {
	old := DefaultConfig()
	add, err := ParseConfig([]byte(`{"aggregationIds":{"sum":0,"count":1,"min":2,"max":3,"last":4},"intervals":[` +
		`{"table":"tsdb","preAggregationTable":"tsdb-preagg","interval":"1m","rowSpan":"1h","defaultInterval":true},` +
		`{"table":"tsdb-rollup-1h","preAggregationTable":"tsdb-rollup-preagg-1h","interval":"1h","rowSpan":"1d"},` +
		`{"table":"tsdb-rollup-10m","preAggregationTable":"tsdb-rollup-preagg-10m","interval":"10m","rowSpan":"1d"},` +
		`{"table":"tsdb-rollup-1d","preAggregationTable":"tsdb-rollup-preagg-1d","interval":"1d","rowSpan":"1n"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := add.Extends(old); err != nil || len(got) != 1 || got[0] != "10m" {
		t.Errorf("adding 10m: %v %v", got, err)
	}
	if _, err := old.Extends(add); err == nil || !strings.Contains(err.Error(), "interval 10m") {
		t.Errorf("removing 10m: %v", err)
	}
	changed := strings.Replace(DefaultConfigJSON, `"rowSpan":"1n"`, `"rowSpan":"1y"`, 1)
	c, err := ParseConfig([]byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Extends(old); err == nil || !strings.Contains(err.Error(), "interval 1d") || !strings.Contains(err.Error(), "cannot be changed") {
		t.Errorf("changing 1d: %v", err)
	}
	ids, _ := ParseConfig([]byte(strings.Replace(DefaultConfigJSON, `"min":2,"max":3`, `"min":3,"max":2`, 1)))
	if _, err := ids.Extends(old); err == nil || !strings.Contains(err.Error(), "aggregator") {
		t.Errorf("changing ids: %v", err)
	}
}
