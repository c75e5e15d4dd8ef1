package main

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// cellsOf returns a table's cells as "rowkey qualifier=value" lines, hex.
func cellsOf(t *testing.T, db storage.DB, table string) []string {
	t.Helper()
	tbl, err := db.Table(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	sc := tbl.Scan(context.Background(), &storage.ScanOptions{})
	defer sc.Close()
	var out []string
	for sc.Next() {
		row := sc.Row()
		for _, c := range row.Cells {
			out = append(out, hex.EncodeToString(row.Key)+" "+hex.EncodeToString(c.Qualifier)+"="+hex.EncodeToString(c.Value))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDaemonRollupIngest: telnet rollup and /api/rollup store rollups,
// pre-aggregates and rolled-up pre-aggregates with OpenTSDB 2.4's bytes
// (tsd.storage.format=opentsdb, no salt: UIDs 000001 for the metric, host
// and web01, 000002 for _aggregate and SUM, in assignment order), refuse
// what OpenTSDB refuses with its messages, and store the neighbours of a
// refused point.
func TestDaemonRollupIngest(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.storage.format=opentsdb", "--tsd.storage.salt.width=0")
	got := telnetSession(t, d.Addr,
		"rollup 1h-sum sys.if.bytes.out 1356998400 42 host=web01",
		"rollup 1h-max sys.if.bytes.out 1357002000 1.3E3 host=web01",
		"rollup sum sys.if.bytes.out 1356998400 10 host=web01",
		"rollup 1d-max:sum sys.if.bytes.out 1357084800 5 host=web01",
		"rollup 1h-sum sys.if.bytes.out 1356998400000 42 host=web01",
		"rollup 2h-sum sys.if.bytes.out 1356998400 1 host=web01",
		"rollup 1h-last sys.if.bytes.out 1356998400 1 host=web01",
		"rollup avg sys.if.bytes.out 1356998400 1 host=web01",
		"rollup sum sys.if.bytes.out 1356998400 1 host=web01 _aggregate=max",
		"rollup 1h-sum sys.if.bytes.out 1356998400 42",
		"rollup  sys.if.bytes.out 1356998400 42 host=web01",
		"rollup 1h-sum sys.if.bytes.out 1356998400 4x2 host=web01",
	)
	equalLines(t, "telnet replies", got[:len(got)-2], []string{
		"rollup: illegal argument: bad timestamp=1356998400000 when trying to add value=[42]/0 to metric=sys.if.bytes.out, tags={host=web01}",
		"rollup: No such rollup: No rollups configured for the interval: 2h",
		"rollup: illegal argument: No ID found mapping to aggregator: last",
		"rollup: illegal argument: Derived group by aggregations are not allowed avg with metric sys.if.bytes.out {_aggregate=AVG, host=web01}",
		"rollup: illegal argument: Given tag value for _aggregate of max did not match the group by aggregator of sum for sys.if.bytes.out {_aggregate=max, host=web01}",
		"rollup: illegal argument: not enough arguments (need least 7, got 4)",
		"rollup: illegal argument: Missing interval or aggregator",
		"rollup: invalid value: Invalid character 'x' in 4x2",
	})
	body := `[{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":7,"tags":{"host":"web02"},"interval":"1h","aggregator":"count"},
	{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":7,"tags":{"host":"web02"},"interval":"2h","aggregator":"sum"},
	{"metric":"sys.if.bytes.out","timestamp":1356998400000,"value":7,"tags":{"host":"web02"},"interval":"1h","aggregator":"sum"},
	{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":7,"tags":{"host":"web02"}},
	{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":7,"tags":{"host":"web02"},"interval":"1h"},
	{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":7,"tags":{"host":"web02"},"groupByAggregator":"dev"},
	{"metric":"sys.if.bytes.out","timestamp":1356998460,"value":8,"tags":{"host":"web02"},"groupByAggregator":"max"}]`
	resp, out := post(t, http.MethodPost, "http://"+d.Addr+"/api/rollup?details", []byte(body), false)
	// Refused points echo RollUpDataPoint's fields as sent, after the tags.
	want := `{"success":2,"failed":5,"errors":[` +
		`{"datapoint":{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":"7","tags":{"host":"web02"},"interval":"2h","aggregator":"sum"},"error":"Unexpected exception"},` +
		`{"datapoint":{"metric":"sys.if.bytes.out","timestamp":1356998400000,"value":"7","tags":{"host":"web02"},"interval":"1h","aggregator":"sum"},"error":"bad timestamp=1356998400000 when trying to add value=[7]/0 to metric=sys.if.bytes.out, tags={host=web02}"},` +
		`{"datapoint":{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":"7","tags":{"host":"web02"}},"error":"Missing interval"},` +
		`{"datapoint":{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":"7","tags":{"host":"web02"},"interval":"1h"},"error":"Missing aggregator"},` +
		`{"datapoint":{"metric":"sys.if.bytes.out","timestamp":1356998400,"value":"7","tags":{"host":"web02"},"groupByAggregator":"dev"},"error":"Derived group by aggregations are not allowed dev with metric sys.if.bytes.out {_aggregate=DEV, host=web02}"}` +
		`]}`
	if resp.StatusCode != http.StatusBadRequest || out != want {
		t.Errorf("/api/rollup = %d\n%s\nwant 400\n%s", resp.StatusCode, out, want)
	}
	// Refused rollup points are logged as refused puts are (obs_test.go).
	d.waitLog(t, "the refused rollup points", `level=WARN`, `msg="points refused"`, `kind=ingest.refused.rollup`,
		`client=127.0.0.1`, `protocol=rollup`, `points=5`, `first_error="Unexpected exception"`)
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		table string
		want  []string
	}{
		// 1h cells in a day row (base 50E22700): sum at index 0 = 42 on one
		// byte; max at index 1 = 1300 as a float32 (flags B); count of web02.
		{"tsdb-rollup-1h", []string{
			"00000150e22700000001000001 000000=2a",
			"00000150e22700000001000001 03001b=44a28000",
			"00000150e22700000001000003 010000=07",
		}},
		// A pre-aggregate: a raw single cell (qualifier 0000) of the series
		// with _aggregate=SUM (000002=000002) in the default interval's
		// pre-aggregation table; and web02's max at offset 60 s (03C0).
		{"tsdb-preagg", []string{
			"00000150e22700000001000001000002000002 0000=0a",
			"00000150e22700000001000003000002000004 03c0=08",
		}},
		// A rolled-up pre-aggregate: max (id 3) at index 1 (January 2nd)
		// of the month row.
		{"tsdb-rollup-preagg-1d", []string{"00000150e22700000001000001000002000002 030010=05"}},
	} {
		if got := cellsOf(t, db, tc.table); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tc.table, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
