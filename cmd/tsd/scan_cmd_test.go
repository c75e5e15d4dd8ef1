package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// hourH is 2013-01-01T00:00:00Z, the row of the worked example in
// docs/formats.md, Row keys.
const hourH = 1356998400

// writtenUs is every test cell's storage timestamp (µs).
const writtenUs = 1700000000000000

// tsdScan runs `tsd scan` through run, as main does, on the store in dir.
func tsdScan(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"scan", "--data", dir}, args...), &out, &errb, func(string) string { return "" })
	return code, out.String(), errb.String()
}

// scanStore is a store built with the real uid package and rowkey
// encoders.
type scanStore struct {
	t      *testing.T
	ctx    context.Context
	dense  []byte // the dense cell's value, as rowkey encoded it
	data   storage.Table
	u      *uid.UIDs
	layout rowkey.Layout
}

// buildScanStore creates a store in dir recorded with saltWidth (20
// buckets) and lets fill write its rows.
func buildScanStore(t *testing.T, dir string, saltWidth int, fill func(s *scanStore)) {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbls, err := storage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable),
		uid.TableSpec(uid.DefaultTable), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]storage.Table{"tsdb": tbls[0], uid.DefaultTable: tbls[1], schema.DefaultMetaTable: tbls[2]}
	want := schema.DefaultSettings()
	want.SaltWidth, want.Given = saltWidth, schema.SettingSaltWidth
	st, err := schema.EnsureRecord(ctx, tables[schema.DefaultMetaTable], uid.MaxIDProbe(tables[uid.DefaultTable]), want)
	if err != nil {
		t.Fatal(err)
	}
	u, err := uid.New(tables[uid.DefaultTable], &uid.Options{Widths: st.Widths, Format: st.Format})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := salt.New(st.SaltWidth, st.SaltBuckets)
	if err != nil {
		t.Fatal(err)
	}
	s := &scanStore{t: t, ctx: ctx, data: tables["tsdb"], u: u, layout: rowkey.Layout{Widths: st.Widths, Salt: sl}}
	s.layout.EnsureDefaults()
	for _, a := range []struct {
		k     uid.Kind
		names []string
	}{
		{uid.Metric, []string{"sys.cpu.user", "sys.cpu.nice", "sys.unused"}},
		{uid.TagK, []string{"host"}},
		{uid.TagV, []string{"web01", "web02"}},
	} {
		for _, n := range a.names {
			if _, err := u.Assign(ctx, a.k, []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill(s)
}

// key returns the row key of metric{host=host} in the hour of sec.
func (s *scanStore) key(metric, host string, sec int64) []byte {
	s.t.Helper()
	m, err := s.u.Lookup(s.ctx, uid.Metric, []byte(metric))
	if err != nil {
		s.t.Fatal(err)
	}
	hk, _ := s.u.Lookup(s.ctx, uid.TagK, []byte("host"))
	hv, err := s.u.Lookup(s.ctx, uid.TagV, []byte(host))
	if err != nil {
		s.t.Fatal(err)
	}
	tags := []rowkey.Tag{{Key: s.u.AppendID(nil, uid.TagK, hk), Value: s.u.AppendID(nil, uid.TagV, hv)}}
	k, err := s.layout.AppendRowKey(nil, s.u.AppendID(nil, uid.Metric, m), sec*1000, tags)
	if err != nil {
		s.t.Fatal(err)
	}
	return k
}

// put writes (qualifier, value) pairs to row, each written at writtenUs.
func (s *scanStore) put(row []byte, qv ...[]byte) {
	s.t.Helper()
	var cells []storage.Cell
	for i := 0; i < len(qv); i += 2 {
		cells = append(cells, storage.Cell{Family: "t", Qualifier: qv[i], Value: qv[i+1], Timestamp: writtenUs})
	}
	if err := s.data.Put(s.ctx, row, cells); err != nil {
		s.t.Fatal(err)
	}
}

// fillMixed writes one row in every format plus a corrupt cell, a second
// row an hour later, and rows the scan must not show.
func fillMixed(s *scanStore) {
	t := s.t
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := int64(hourH)
	rowA := s.key("sys.cpu.user", "web01", base)
	cq, cv, err := rowkey.AppendCompacted(nil, nil, base, []series.Point{
		series.IntPoint(base*1000+2000, 4), series.IntPoint(base*1000+3000, 5)})
	if err != nil {
		t.Fatal(err)
	}
	av := must(rowkey.AppendAppendsPoint(nil, 4000, series.Float64Point(base*1000+4000, 0.1)))
	av = must(rowkey.AppendAppendsPoint(av, 5500, series.IntPoint(base*1000+5500, 7)))
	var enc rowkey.DenseEncoder
	dv := must(enc.Append(nil, base, []series.Point{
		series.IntPoint(base*1000+10000, 100), series.IntPoint(base*1000+11000, 101), series.IntPoint(base*1000+12000, 103)}))
	s.dense = dv
	s.put(rowA,
		[]byte{0x00, 0x00}, []byte{0x2A}, // int 42 at +0s
		[]byte{0x00, 0x1B}, []byte{0x42, 0x2A, 0x00, 0x00}, // float32 42.5 at +1s
		cq, cv,
		[]byte{0x00, 0x60, 0x00, 0x70}, []byte{0x01, 0x02, 0x03, 0x00}, // corrupt: 3 value bytes for two 1-byte points
		must(rowkey.AppendAnnotationQualifier(nil, 8000)), []byte(`{"description":"deploy"}`),
		[]byte(rowkey.AppendsQualifier), av,
		rowkey.AppendDenseQualifier(nil, 7, 1), dv,
	)
	s.put(s.key("sys.cpu.user", "web02", base+3600), []byte{0x00, 0x00}, []byte{0x01})
	s.put(s.key("sys.cpu.user", "web01", base-3600), []byte{0x00, 0x00}, []byte{0x09}) // before START
	s.put(s.key("sys.cpu.user", "web01", base+7200), []byte{0x00, 0x00}, []byte{0x09}) // after END
	s.put(s.key("sys.cpu.nice", "web01", base), []byte{0x00, 0x00}, []byte{0x09})      // another metric
}

// rowAOut is row A's block after its key hex.
func rowAOut(key string) string {
	return "row " + key + " sys.cpu.user 1356998400 2013-01-01T00:00:00.000Z {host=web01}\n" +
		"  cell q=0000 v=2A written=1700000000000 single\n" +
		"    1356998400000 2013-01-01T00:00:00.000Z 42 int\n" +
		"  cell q=001B v=422A0000 written=1700000000000 single\n" +
		"    1356998401000 2013-01-01T00:00:01.000Z 42.5 float32\n" +
		"  cell q=00200030 v=040500 written=1700000000000 compacted\n" +
		"    1356998402000 2013-01-01T00:00:02.000Z 4 int\n" +
		"    1356998403000 2013-01-01T00:00:03.000Z 5 int\n" +
		"  CORRUPT row " + key + " q=00600070: cell v=01020300 written=1700000000000: corrupt: Corrupted value: couldn't break down into individual values CORRUPT_DETAIL\n" +
		"  cell q=010008 v=7B226465736372697074696F6E223A226465706C6F79227D written=1700000000000 annotation t=1356998408000 2013-01-01T00:00:08.000Z \"{\\\"description\\\":\\\"deploy\\\"}\"\n" +
		"  cell q=050000 v=004F3FB999999999999AF0055F0007 written=1700000000000 appends\n" +
		"    1356998404000 2013-01-01T00:00:04.000Z 0.1 float64\n" +
		"    1356998405500 2013-01-01T00:00:05.500Z 7 int\n" +
		"  cell q=800000000700000001 v=DENSE written=1700000000000 dense writer=7 seq=1\n" +
		"    1356998410000 2013-01-01T00:00:10.000Z 100 int\n" +
		"    1356998411000 2013-01-01T00:00:11.000Z 101 int\n" +
		"    1356998412000 2013-01-01T00:00:12.000Z 103 int\n"
}

func rowBOut(key string) string {
	return "row " + key + " sys.cpu.user 1357002000 2013-01-01T01:00:00.000Z {host=web02}\n" +
		"  cell q=0000 v=01 written=1700000000000 single\n" +
		"    1357002000000 2013-01-01T01:00:00.000Z 1 int\n"
}

// scanOut fills in the parts of the expected output that rowkey owns: the
// dense value bytes (its encoder's choice) and the detail after OpenTSDB's
// wording of a compacted column error.
func scanOut(got, want string, dense []byte) string {
	want = strings.Replace(want, "DENSE", fmt.Sprintf("%X", dense), 1)
	const reason = "couldn't break down into individual values "
	if i := strings.Index(got, reason); i >= 0 {
		rest := got[i+len(reason):]
		want = strings.Replace(want, "CORRUPT_DETAIL", rest[:strings.IndexByte(rest, '\n')], 1)
	}
	return want
}

func TestScanUnsalted(t *testing.T) {
	dir := t.TempDir()
	var dense []byte
	buildScanStore(t, dir, 0, func(s *scanStore) { fillMixed(s); dense = s.dense })
	code, out, errs := tsdScan(t, dir, "1356998400", "1357005599", "sum", "sys.cpu.user")
	want := rowAOut("00000150E22700000001000001") + rowBOut("00000150E23510000001000002") +
		"scanned 1 buckets: 2 rows, 8 cells, 10 points, 1 corrupt\n"
	want = scanOut(out, want, dense)
	if code != exitFailed || out != want {
		t.Fatalf("exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, exitFailed, out, want, errs)
	}
	if !strings.Contains(errs, "tsd scan: 1 corrupt cells or row keys skipped") {
		t.Errorf("stderr: %s", errs)
	}
	// A tag filter keeps one row; times in other forms select the same hours.
	code, out, errs = tsdScan(t, dir, "1356998400000", "1357002000.999", "sys.cpu.user", "host=web02")
	want = rowBOut("00000150E23510000001000002") + "scanned 1 buckets: 1 rows, 1 cells, 1 points, 0 corrupt\n"
	if code != exitOK || out != want {
		t.Fatalf("host=web02: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errs)
	}
	code, out, _ = tsdScan(t, dir, "1356998400", "1356998400", "sys.cpu.user", "host=*")
	if code != exitFailed || !strings.HasPrefix(out, "row 00000150E22700000001000001 ") ||
		!strings.HasSuffix(out, "scanned 1 buckets: 1 rows, 7 cells, 9 points, 1 corrupt\n") {
		t.Fatalf("host=*: exit %d\n%s", code, out)
	}
}

func TestScanSalted(t *testing.T) {
	dir := t.TempDir()
	var dense []byte
	buildScanStore(t, dir, 1, func(s *scanStore) {
		fillMixed(s)
		dense = s.dense
		// Row A's key in the wrong bucket: a key ParseRowKey refuses.
		bad := append([]byte{0x03}, s.key("sys.cpu.user", "web01", hourH)[1:]...)
		s.put(bad, []byte{0x00, 0x00}, []byte{0x09})
	})
	code, out, errs := tsdScan(t, dir, "1356998400", "1357005599", "sys.cpu.user")
	// 000001 000001 000001 hashes to bucket 8 (docs/formats.md, Row keys),
	// so web02's row (the last byte one more) to 9.
	wantStart := "CORRUPT row 0300000150E22700000001000001: "
	want := rowAOut("0800000150E22700000001000001") + rowBOut("0900000150E23510000001000002") +
		"scanned 20 buckets: 2 rows, 8 cells, 10 points, 2 corrupt\n"
	want = scanOut(out, want, dense)
	first, rest, _ := strings.Cut(out, "\n")
	if code != exitFailed || !strings.HasPrefix(first, wantStart) || !strings.HasSuffix(first, "(1 cells skipped)") || rest != want {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s...\n%s\nstderr:\n%s", code, out, wantStart, want, errs)
	}
	if !strings.Contains(errs, "2 corrupt cells or row keys skipped") {
		t.Errorf("stderr: %s", errs)
	}
}

// TestScanRowsCutIntoBatches prints rows that arrive a cell at a time, as
// rows larger than the scan's byte bound do, exactly as whole ones: one
// row line, every cell, and a corrupt key's row reported once with all
// its cells counted.
func TestScanRowsCutIntoBatches(t *testing.T) {
	dir := t.TempDir()
	buildScanStore(t, dir, 1, func(s *scanStore) {
		fillMixed(s)
		bad := append([]byte{0x03}, s.key("sys.cpu.user", "web01", hourH)[1:]...)
		s.put(bad, []byte{0x00, 0x00}, []byte{0x09}, []byte{0x00, 0x10}, []byte{0x0A})
	})
	code, whole, _ := tsdScan(t, dir, "1356998400", "1357005599", "sys.cpu.user")
	scanBatchBytes = 1
	defer func() { scanBatchBytes = 0 }()
	cutCode, cut, errs := tsdScan(t, dir, "1356998400", "1357005599", "sys.cpu.user")
	if cutCode != code || cut != whole {
		t.Fatalf("rows cut into cells: exit %d, stdout:\n%s\nwhole rows: exit %d, stdout:\n%s\nstderr:\n%s", cutCode, cut, code, whole, errs)
	}
	if !strings.Contains(cut, "(2 cells skipped)") || !strings.HasSuffix(cut, "scanned 20 buckets: 2 rows, 8 cells, 10 points, 2 corrupt\n") {
		t.Fatalf("stdout:\n%s", cut)
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	buildScanStore(t, dir, 1, func(*scanStore) {})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"0", "no.such.metric"}, exitFailed, "No such name for 'metrics': 'no.such.metric'"},
		{[]string{"0", "sys.cpu.user", "dc=lga"}, exitFailed, "No such name for 'tagk': 'dc'"},
		{[]string{"0", "sys.cpu.user", "host=web99"}, exitFailed, "No such name for 'tagv': 'web99'"},
		{[]string{"0", "sys.cpu.user", "host"}, exitUsage, `unexpected argument "sys.cpu.user": not an aggregator`},
		{[]string{"0", "sys.cpu.user", "host="}, exitUsage, `bad tag "host=": want TAGK=TAGV`},
		{[]string{"yesterday", "sys.cpu.user"}, exitUsage, `start time: "yesterday": not a time`},
		{[]string{"1h-ago", "2h-ago", "sys.cpu.user"}, exitUsage, "is before start time"},
		{[]string{"0"}, exitUsage, "usage: START [END]"},
		{[]string{"0", "sum", "rate", "x", "m"}, exitUsage, `unexpected argument "rate"`},
		{[]string{"--delete", "0", "m"}, exitUsage, "--delete is not supported"},
		{[]string{"--no.such.key=1", "0", "m"}, exitUsage, `unknown config key "no.such.key"`},
	} {
		code, _, errs := tsdScan(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d (want %d), stderr %s", tc.args, code, tc.code, errs)
		}
	}
	code, out, errs := tsdScan(t, dir, "0", "sum", "rate", "sys.cpu.user")
	if code != exitOK || out != "scanned 20 buckets: 0 rows, 0 cells, 0 points, 0 corrupt\n" {
		t.Errorf("empty scan: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = tsdScan(t, dir, "--help")
	if code != exitOK || !strings.Contains(out, "START [END] [AGGREGATOR [rate]] METRIC") {
		t.Errorf("help: %d %s", code, out)
	}
	withStore(t, dir, func(storage.Table) {
		code, _, errs := tsdScan(t, dir, "0", "sys.cpu.user")
		if code != exitFailed || !strings.Contains(errs, "stop the daemon first") {
			t.Errorf("scan on a locked store: exit %d, %s", code, errs)
		}
	})
}

func TestParseScanTime(t *testing.T) {
	now := time.UnixMilli(1700000000123)
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"now", 1700000000123},
		{"1h-ago", 1700000000123 - 3600000},
		{"2d-ago", 1700000000123 - 2*86400000},
		{"1356998400", 1356998400000},
		{"0", 0},
		{"1356998400500", 1356998400500},
		{"1356998400.5", 1356998400500},
		{"1356998400.05", 1356998400050},
		{"4294967295", 4294967295000},
		{"2013/01/01-00:00:00", time.Date(2013, 1, 1, 0, 0, 0, 0, time.Local).UnixMilli()},
		{"2013/01/01 00:30", time.Date(2013, 1, 1, 0, 30, 0, 0, time.Local).UnixMilli()},
		{"2013/01/02", time.Date(2013, 1, 2, 0, 0, 0, 0, time.Local).UnixMilli()},
	} {
		got, err := parseScanTime(tc.in, now)
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1", "1h", "x-ago", "99999999999999999999", "2013/13/01", "1356998400.1234", "99999999999999"} {
		if got, err := parseScanTime(bad, now); err == nil {
			t.Errorf("%q: %d, want an error", bad, got)
		}
	}
}

func FuzzParseScanTime(f *testing.F) {
	for _, s := range []string{"now", "1h-ago", "1356998400", "1356998400.5", "2013/01/01-00:00:00", "0ms-ago", "9999999999999"} {
		f.Add(s)
	}
	now := time.UnixMilli(1700000000123)
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := parseScanTime(s, now)
		if err == nil && (ms < 0 || ms > rowkey.MaxTimestamp) {
			t.Fatalf("%q: %d out of range", s, ms)
		}
	})
}
