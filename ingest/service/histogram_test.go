package service

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// histStack is a writer with histograms on over a real Pebble store.
type histStack struct {
	w    *Writer
	data storage.Table
}

func newHistStack(t testing.TB) *histStack {
	t.Helper()
	return newHistStackOn(t, vfs.Default, t.TempDir())
}

// newHistStackOn is newHistStack with the store in dir on fs.
func newHistStackOn(t testing.TB, fs vfs.FS, dir string) *histStack {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger(), FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, spec := range []storage.TableSpec{uid.TableSpec(uid.DefaultTable), schema.DataTableSpec("tsdb")} {
		if err := db.EnsureTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	utbl, _ := db.Table(ctx, uid.DefaultTable)
	data, _ := db.Table(ctx, "tsdb")
	u, err := uid.New(utbl, &uid.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := head.OpenHead(db.FS(), dir+"/wal", &head.HeadOptions{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	codecs, err := hist.ParseConfig(hist.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	layout := rowkey.Layout{Widths: series.Widths{Metric: 3, TagK: 3, TagV: 3}}
	w, err := NewWriter(Options{UIDs: u, Head: h, Logger: quietLogger(),
		Histograms: &HistogramOptions{Codecs: codecs, Table: data, Layout: &layout}})
	if err != nil {
		t.Fatal(err)
	}
	return &histStack{w: w, data: data}
}

// TestTelnetHistogram: telnet histogram lines store OpenTSDB's cell in
// the data table at once, and refused lines answer OpenTSDB's messages
// without costing the next line.
func TestTelnetHistogram(t *testing.T) {
	st := newHistStack(t)
	h, err := NewTelnetHandler(st.w, TelnetOptions{Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	out := runTelnet(t, h, "histogram m 1356998400 1,2=3:u=1 host=a\n"+
		"histogram m 1356998400 u=1 host=a\n"+
		"histogram m 1356998400 9 AAE/gAAAQAAAAAoAAA== host=a\n"+
		"histogram m 1356998400 0 !!! host=a\n"+
		"histogram m 1356998400500 0 AAE/gAAAQAAAAAoAAA== host=a\n")
	want := "histogram: HBase error: a histogram of 5 bytes cannot be read back (at least 6): give it a bucket\n" +
		"histogram: HBase error: No codec found mapped to ID 9\n" +
		"histogram: HBase error: bad base64 histogram value: illegal base64 data at input byte 0\n"
	if out != want {
		t.Errorf("replies:\n%s\nwant:\n%s", out, want)
	}
	// m, host, a are 000001; row 000001 50E22700 000001 000001.
	row, _ := hex.DecodeString("00000150e22700000001000001")
	cells, err := st.data.Get(context.Background(), row, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, hex.EncodeToString(c.Qualifier)+"="+hex.EncodeToString(c.Value))
	}
	wantCells := []string{
		"060000=0000013f80000040000000030100",          // [1,2) 3, underflow 1
		"06000001f4=00" + "00013f800000400000000a0000", // +500 ms
	}
	if strings.Join(got, " ") != strings.Join(wantCells, " ") {
		t.Errorf("cells %q, want %q", got, wantCells)
	}
	if n := st.w.HistogramsStored(); n != 2 {
		t.Errorf("HistogramsStored = %d, want 2", n)
	}
}

// FuzzTelnetHistogram: any histogram line gets no reply (stored) or one
// "histogram: " line, and never closes the connection: the version after
// it is answered.
func FuzzTelnetHistogram(f *testing.F) {
	for _, s := range []string{
		"m 1356998400 1,2=3:u=1:o=2 host=a", "m 1356998400 0 AAE/gAAAQAAAAAoAAA== host=a",
		"m 1 x", "m 1356998400 2147483648 AA host=a", "m 1356998400.5 1,2=3 host=a", " m  1 1,2=3 host=a",
	} {
		f.Add(s)
	}
	st := newHistStack(f)
	h, err := NewTelnetHandler(st.w, TelnetOptions{Version: "v"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		if strings.ContainsAny(rest, "\r\n") {
			return
		}
		out := runTelnet(t, h, "histogram "+rest+"\nversion\n")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[len(lines)-1] != "v" || len(lines) > 2 || len(lines) == 2 && !strings.HasPrefix(lines[0], "histogram: ") {
			t.Fatalf("%q: %q", rest, out)
		}
	})
}

// FuzzHistogramFromJSON: any buckets object builds a histogram whose
// bytes decode back to it, or is refused with a message; never a panic.
func FuzzHistogramFromJSON(f *testing.F) {
	for _, s := range []string{`{"1,2":5,"2,3":"6"}`, `{"1-2":5}`, `{"a,b":1}`, `{"1,2":1.9e3}`, `{"NaN,Infinity":-1}`, `[]`} {
		f.Add(s)
	}
	st := newHistStack(f)
	f.Fuzz(func(t *testing.T, buckets string) {
		var h hist.Histogram
		if err := st.w.HistogramFromJSON(&h, putjson.HistogramFields{Buckets: []byte(buckets)}); err != nil {
			return
		}
		enc := h.AppendEncoded(nil, true)
		var back hist.Histogram
		if len(enc) >= hist.MinEncodedBytes {
			if err := back.Decode(enc, true); err != nil || len(back.Buckets) != len(h.Buckets) {
				t.Fatalf("%s: %x: %v", buckets, enc, err)
			}
		}
	})
}

// TestHistogramPowerLoss: a histogram acknowledged (AddHistogram
// returned) is on stable storage: a crash that drops every unsynced
// byte of a simulated file system keeps its cell.
func TestHistogramPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	st := newHistStackOn(t, fs, "/db")
	sess := st.w.Session(Telnet)
	var h hist.Histogram
	h.Set(1, 2, 3)
	pt := parse.Point{Metric: []byte("m"), Tags: []uid.Tag{{Key: []byte("host"), Value: []byte("a")}}}
	pt.Value.T = 1356998400_000
	if err := sess.AddHistogram(context.Background(), &pt, &h); err != nil {
		t.Fatal(err)
	}
	sess.Release()
	clone := fs.CrashClone(vfs.CrashCloneCfg{}) // unsynced data lost
	db, err := pebble.Open("/db", &pebble.Options{Logger: quietLogger(), FS: clone})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data, err := db.Table(context.Background(), "tsdb")
	if err != nil {
		t.Fatal(err)
	}
	row, _ := hex.DecodeString("00000150e22700000001000001")
	cells, err := data.Get(context.Background(), row, nil)
	if err != nil || len(cells) != 1 || hex.EncodeToString(cells[0].Value) != "0000013f80000040000000030000" {
		t.Fatalf("after the crash: %v %+v", err, cells)
	}
}
