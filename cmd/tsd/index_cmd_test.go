package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// otsdbFlags are the settings of an OpenTSDB 2.4 store with its defaults
// (the buckets must be given too, though unused without salt).
var otsdbFlags = []string{"--tsd.storage.salt.width=0", "--tsd.storage.salt.buckets=20", "--tsd.storage.format=opentsdb"}

// buildOpenTSDBStore writes, in dir, what OpenTSDB leaves behind: a data
// table without salt and a UID table, no meta table and no tsd record.
// Series web01 and web02 of sys.cpu.user hold int points at the first
// second of hours 0..hours-1 after hourH (value = hour); it returns their
// TSUIDs.
func buildOpenTSDBStore(t *testing.T, dir string, hours int) [][]byte {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbls, err := storage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable), uid.TableSpec(uid.DefaultTable))
	if err != nil {
		t.Fatal(err)
	}
	data, uidTbl := tbls[0], tbls[1]
	u, err := uid.New(uidTbl, &uid.Options{Format: schema.FormatOpenTSDB})
	if err != nil {
		t.Fatal(err)
	}
	l := rowkey.Layout{Widths: series.DefaultWidths(), Salt: salt.Salt{}}
	l.EnsureDefaults()
	var tsuids [][]byte
	for _, host := range []string{"web01", "web02"} {
		tsuid, err := u.ResolvePoint(ctx, nil, []byte("sys.cpu.user"), []uid.Tag{{Key: []byte("host"), Value: []byte(host)}})
		if err != nil {
			t.Fatal(err)
		}
		tsuids = append(tsuids, tsuid)
		for h := range hours {
			ms := (hourH + int64(h)*3600 + 1) * 1000
			row, err := l.AppendRowKeyFromTSUID(nil, tsuid, ms)
			if err != nil {
				t.Fatal(err)
			}
			p := series.IntPoint(ms, int64(h))
			q, _ := rowkey.AppendQualifier(nil, rowkey.NewQualifier(1000, rowkey.ValueFlags(p)))
			if err := data.Put(ctx, row, []storage.Cell{{Family: "t", Qualifier: q, Value: rowkey.AppendValue(nil, p)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A row key OpenTSDB never writes: two bytes short of a tag pair.
	bad := append(l.AppendKeyPrefix(nil, 0, tsuids[0][:3], hourH*1000), 0, 0)
	if err := data.Put(ctx, bad, []storage.Cell{{Family: "t", Qualifier: []byte{0, 0}, Value: []byte{1}}}); err != nil {
		t.Fatal(err)
	}
	return tsuids
}

// checkIndexSpans opens the store's series index and checks that it holds
// exactly tsuids, each spanning hours 0..hours-1 after hourH.
func checkIndexSpans(t *testing.T, dir string, tsuids [][]byte, hours int) {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	meta, err := db.Table(ctx, schema.DefaultMetaTable)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, meta, nil, &index.Options{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	b, err := ix.Postings(ctx, uid.ID(tsuids[0][2]), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.GetCardinality() != uint64(len(tsuids)) {
		t.Fatalf("postings of the metric: %d series, want %d", b.GetCardinality(), len(tsuids))
	}
	for _, ts := range tsuids {
		id, ok := ix.Lookup(ts)
		if !ok || !b.Contains(id) {
			t.Fatalf("series %x not in the index or its metric's postings", ts)
		}
		s, _ := ix.Series(id)
		if !s.HasSpan || s.First != hourH || s.Last != hourH+int64(hours-1)*3600 {
			t.Errorf("series %x: span [%d, %d] (has %v), want [%d, %d]", ts, s.First, s.Last, s.HasSpan, hourH, hourH+int64(hours-1)*3600)
		}
	}
}

// TestIndexRebuild runs `tsd index rebuild` through run on an OpenTSDB
// store: the bad row is reported (exit 1), every series is indexed with
// its hours, and a second run changes nothing.
func TestIndexRebuild(t *testing.T) {
	dir := t.TempDir()
	tsuids := buildOpenTSDBStore(t, dir, 5)
	var out, errb bytes.Buffer
	args := append(append([]string{"index", "--data", dir}, otsdbFlags...), "--batch", "1", "rebuild")
	code := run(args, &out, &errb, func(string) string { return "" })
	want := "rebuilt index: 11 rows, 10 series registered, 2 series in the index, 1 bad row keys skipped, 0 global annotation rows\n"
	if code != exitFailed || out.String() != want || !strings.Contains(errb.String(), "1 rows with bad keys skipped") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and %q", code, out.String(), errb.String(), want)
	}
	checkIndexSpans(t, dir, tsuids, 5)
	out.Reset()
	code = run([]string{"index", "--data", dir, "rebuild"}, &out, &errb, func(string) string { return "" })
	if code != exitFailed || !strings.Contains(out.String(), " 2 series in the index,") {
		t.Fatalf("second run: exit %d, stdout %q", code, out.String())
	}
	checkIndexSpans(t, dir, tsuids, 5)
}

// TestIndexRebuildUsage: bad command lines exit 2 with a message.
func TestIndexRebuildUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "rebiuld"}, `unknown command "rebiuld"`},
		{[]string{"index", "--batch", "0", "rebuild"}, `--batch "0": want a positive integer`},
		{[]string{"index", "rebuild", "--batch"}, "flag --batch needs a value"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb, func(string) string { return "" })
		if code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"index", "--help"}, &out, &out, nil); code != exitOK || !strings.HasPrefix(out.String(), "Usage: tsd index") {
		t.Errorf("tsd index --help: exit %d\n%s", code, out.String())
	}
}

// TestIndexRebuildBinary runs the built binary on an OpenTSDB store whose
// rows are all good and checks the index it leaves.
func TestIndexRebuildBinary(t *testing.T) {
	dir := t.TempDir()
	tsuids := buildOpenTSDBStore(t, dir, 3)
	// Remove the bad row so the run succeeds.
	removeBadRow(t, dir, tsuids[0])
	out, code := runTSD(t, append(append([]string{"index", "--data", dir}, otsdbFlags...), "rebuild")...)
	want := fmt.Sprintf("rebuilt index: %d rows, 2 series registered, 2 series in the index, 0 bad row keys skipped, 0 global annotation rows\n", 6)
	if code != exitOK || out != want {
		t.Fatalf("tsd index rebuild: exit %d, output %q, want %q", code, out, want)
	}
	checkIndexSpans(t, dir, tsuids, 3)
	// The daemon on the rebuilt store answers /api/query/last from the
	// index spans: web01's point in its last hour (hour 2, value 2).
	d := startDaemon(t, "--data", dir)
	code, body := d.Get(t, "/api/query/last?resolve&timeseries="+url.QueryEscape("sys.cpu.user{host=web01}"))
	wantLast := fmt.Sprintf(`[{"metric":"sys.cpu.user","timestamp":%d,"value":"2","tags":{"host":"web01"},"tsuid":"%X"}]`,
		(hourH+2*3600+1)*1000, tsuids[0])
	if code != 200 || body != wantLast {
		t.Errorf("GET /api/query/last: %d %s\nwant 200 %s", code, body, wantLast)
	}
	// /api/query/exp over the same rows: web01 + web02*10 per hour (both
	// hold the hour's number). The filters do not group, so with
	// useQueryTags both sides have an empty join key and pair.
	q := fmt.Sprintf(`{"time":{"start":"%d","end":"%d","aggregator":"sum"},"filters":[{"id":"w1","tags":[{"type":"literal_or","tagk":"host","filter":"web01"}]},`+
		`{"id":"w2","tags":[{"type":"literal_or","tagk":"host","filter":"web02"}]}],"metrics":[{"id":"a","metric":"sys.cpu.user","filter":"w1"},`+
		`{"id":"b","metric":"sys.cpu.user","filter":"w2"}],"expressions":[{"id":"e","expr":"a + b * 10","join":{"operator":"intersection","useQueryTags":true}}]}`, hourH, hourH+3*3600)
	resp, body := post(t, "POST", "http://"+d.Addr+"/api/query/exp", []byte(q), false)
	ms := func(h int64) int64 { return (hourH + h*3600 + 1) * 1000 }
	wantDPS := fmt.Sprintf(`"dps":[[%d,0.0],[%d,11.0],[%d,22.0]]`, ms(0), ms(1), ms(2))
	if resp.StatusCode != 200 || !strings.Contains(body, wantDPS) {
		t.Errorf("POST /api/query/exp: %d %s\nwant %s", resp.StatusCode, body, wantDPS)
	}
}

func removeBadRow(t *testing.T, dir string, tsuid []byte) {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data, _ := db.Table(ctx, "tsdb")
	l := rowkey.Layout{Salt: salt.Salt{}}
	l.EnsureDefaults()
	bad := append(l.AppendKeyPrefix(nil, 0, tsuid[:3], hourH*1000), 0, 0)
	if err := data.Delete(ctx, bad); err != nil {
		t.Fatal(err)
	}
}
