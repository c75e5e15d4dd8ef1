package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	cbt "cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dumpBigtable returns a digest of every table, row and cell of the
// emulator's instance (the one btEmulator.daemon uses) and the row count.
func dumpBigtable(t *testing.T, e *btEmulator) (string, int) {
	t.Helper()
	ctx := context.Background()
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	adm, err := cbt.NewAdminClient(ctx, "proj", "inst", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	tables, err := adm.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	cl, err := cbt.NewClient(ctx, "proj", "inst", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, rows := sha256.New(), 0
	for _, name := range tables {
		fmt.Fprintf(h, "table %s\n", name)
		err := cl.Open(name).ReadRows(ctx, cbt.InfiniteRange(""), func(r cbt.Row) bool {
			rows++
			fmt.Fprintf(h, "row %q\n", r.Key())
			fams := make([]string, 0, len(r))
			for f := range r {
				fams = append(fams, f)
			}
			sort.Strings(fams)
			for _, f := range fams {
				for _, it := range r[f] {
					fmt.Fprintf(h, "%s %d %q\n", it.Column, it.Timestamp, it.Value)
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), rows
}

// TestDaemonReadOnlyMode: a writer stores points on a Bigtable emulator
// and stops; a tsd.mode=ro daemon on the same instance answers them, does
// not serve a write route (404 Endpoint not found) or telnet put (unknown
// command), assigns no UID, and leaves every byte of the store as it was.
func TestDaemonReadOnlyMode(t *testing.T) {
	t.Parallel() // its own emulator
	emulator := startBTEmulator(t)
	w := emulator.daemon(t, filepath.Join(t.TempDir(), "w"))
	w.putJSON(t, []map[string]any{{"metric": "ro.m", "timestamp": 1356998400, "value": 5, "tags": map[string]string{"host": "a"}}})
	if err := w.Stop(t); err != nil {
		t.Fatalf("writer: %v\n%s", err, w.Logs)
	}
	before, rows := dumpBigtable(t, emulator)
	if rows == 0 {
		t.Fatal("the writer stored no rows")
	}

	d := emulator.daemon(t, filepath.Join(t.TempDir(), "r"), "--tsd.mode=ro", "--tsd.http.query.allow_delete=true")
	code, body := d.Get(t, "/api/query?start=1356998000&end=1356999000&m=sum:ro.m")
	if code != 200 || !strings.Contains(body, `"1356998400":5`) {
		t.Errorf("ro query = %d %s", code, body)
	}
	notFound := `{"error":{"code":404,"message":"Endpoint not found"}}`
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/put", `{"metric":"ro.new","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`},
		{"POST", "/api/uid/assign", `{"metric":["ro.new"]}`},
		{"POST", "/api/annotation", `{"startTime":1356998400,"description":"x"}`},
		{"POST", "/write", "ro.new,host=a value=1 1356998400000000000"},
		{"POST", "/api/v2/write", "ro.new,host=a value=1 1356998400000000000"},
		{"POST", "/api/v1/write", ""},
	} {
		resp, out := post(t, r.method, "http://"+d.Addr+r.path, []byte(r.body), false)
		if r.path == "/api/v2/write" { // falls to OpenTSDB's /api/v<N>/ scheme, as in OpenTSDB
			if resp.StatusCode != http.StatusNotImplemented {
				t.Errorf("ro %s = %d %s, want OpenTSDB's 501 for API version 2", r.path, resp.StatusCode, out)
			}
			continue
		}
		if resp.StatusCode != http.StatusNotFound || out != notFound {
			t.Errorf("ro %s %s = %d %s, want 404 %s", r.method, r.path, resp.StatusCode, out, notFound)
		}
	}
	for _, p := range []string{"/metrics", "/api/stats", "/api/suggest?type=metrics&q=ro", "/api/v1/query?query=ro_m"} {
		if code, body := d.Get(t, p); code != 200 {
			t.Errorf("ro GET %s = %d %s", p, code, body)
		}
	}
	if resp, out := post(t, "DELETE", "http://"+d.Addr+"/api/dropcaches", nil, false); resp.StatusCode != 200 {
		t.Errorf("ro DELETE /api/dropcaches = %d %s", resp.StatusCode, out)
	}
	got := telnetSession(t, d.Addr, "put ro.new 1356998400 1 host=a", "help")
	equalLines(t, "ro telnet", got[:2], []string{"unknown command: put.  Try `help'.",
		"available commands: stats dropcaches version exit help "})
	// A query naming an unknown metric, and a delete asked for (deletes
	// are allowed by the key, but not in ro), change nothing either.
	d.Get(t, "/api/query?start=1356998000&m=sum:ro.other")
	resp, out := post(t, "POST", "http://"+d.Addr+"/api/query",
		[]byte(`{"start":1356998000,"end":1356999000,"delete":true,"queries":[{"metric":"ro.m","aggregator":"sum"}]}`), false)
	if resp.StatusCode != 400 || !strings.Contains(out, "allow_delete") {
		t.Errorf("ro delete=true = %d %s, want 400 naming tsd.http.query.allow_delete", resp.StatusCode, out)
	}
	if !strings.Contains(d.Logs.String(), "tsd.http.query.allow_delete is ignored with tsd.mode=ro") {
		t.Errorf("no start line saying allow_delete is ignored in ro:\n%s", d.Logs)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("ro daemon: %v\n%s", err, d.Logs)
	}
	if after, n := dumpBigtable(t, emulator); after != before || n != rows {
		t.Errorf("the ro daemon changed the store: %d rows %s before, %d rows %s after", rows, before, n, after)
	}
	code, body = (&daemon{}).getFrom(t, emulator.daemon(t, filepath.Join(t.TempDir(), "w2")),
		"/api/query?start=1356998000&end=1356999000&m=sum:ro.m")
	if code != 200 || !strings.Contains(body, `"1356998400":5`) {
		t.Errorf("the point after the ro daemon = %d %s", code, body)
	}
}

func (*daemon) getFrom(t *testing.T, d *daemon, path string) (int, string) { return d.Get(t, path) }

// TestDaemonWriteOnlyMode: tsd.mode=wo serves writes, telnet's included,
// and no query route (404 Endpoint not found), as OpenTSDB registers
// none.
func TestDaemonWriteOnlyMode(t *testing.T) {
	d := startDaemon(t, "--data", t.TempDir(), "--tsd.mode=wo")
	putSync(t, d, `{"metric":"wo.m","timestamp":1356998400,"value":1,"tags":{"host":"a"}}`)
	got := telnetSession(t, d.Addr, "put wo.m 1356998401 2 host=a")
	if len(got) != 2 || !strings.HasPrefix(got[0], "tsd ") {
		t.Errorf("wo telnet put then version: %q", got)
	}
	notFound := `{"error":{"code":404,"message":"Endpoint not found"}}`
	for _, p := range []string{"/api/query?start=1356998000&m=sum:wo.m", "/api/query/last?timeseries=wo.m",
		"/api/suggest?type=metrics&q=wo", "/api/search/lookup?m=wo.m", "/api/v1/query?query=up",
		"/api/v1/query_range?query=up&start=1&end=2&step=1", "/api/v1/labels", "/api/v1/label/host/values",
		"/prometheus/api/v1/series?match[]=up", "/query?q=show+databases"} {
		if code, body := d.Get(t, p); code != 404 || body != notFound {
			t.Errorf("wo GET %s = %d %s, want 404", p, code, body)
		}
	}
	if code, body := d.Get(t, "/api/version"); code != 200 {
		t.Errorf("wo /api/version = %d %s", code, body)
	}
	_ = time.Second
}
