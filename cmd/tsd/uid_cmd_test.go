package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// tsdUID runs `tsd uid` on the store in dir and returns exit code, stdout
// and stderr.
func tsdUID(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runUID(append([]string{"--data", dir}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func wantRun(t *testing.T, dir string, wantCode int, wantOut string, args ...string) string {
	t.Helper()
	code, out, errs := tsdUID(t, dir, args...)
	if code != wantCode || (wantOut != "" && out != wantOut) {
		t.Fatalf("tsd uid %s: exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, wantOut, errs)
	}
	return errs
}

func TestUIDCommandLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	wantRun(t, dir, exitOK, "metrics sys.cpu.user: 000001\nmetrics sys.cpu.nice: 000002\nmetrics sys.cpu.user: 000001\n",
		"assign", "metrics", "sys.cpu.user", "sys.cpu.nice", "sys.cpu.user")
	wantRun(t, dir, exitOK, "tagk host: 000001\n", "assign", "tagk", "host")
	wantRun(t, dir, exitOK, "metrics sys.cpu.nice: 000002\nmetrics sys.cpu.user: 000001\ntagk host: 000001\n", "grep")
	wantRun(t, dir, exitOK, "metrics sys.cpu.user: 000001\n", "grep", "metrics", "user$")
	wantRun(t, dir, exitOK, "metrics sys.cpu.nice: 000002\n", "grep", "^sys.cpu.n")
	wantRun(t, dir, exitOK, "tagk host: 000001\n", "-i", "grep", "tagk", "HOST")
	wantRun(t, dir, exitOK, "metrics sys.cpu.idle: 000002 (was sys.cpu.nice)\n", "rename", "metrics", "sys.cpu.nice", "sys.cpu.idle")
	errs := wantRun(t, dir, exitFailed, "", "rename", "metrics", "sys.cpu.idle", "sys.cpu.user")
	if !strings.Contains(errs, `an UID with name "sys.cpu.user" for metrics already exists`) {
		t.Errorf("rename onto existing: %s", errs)
	}
	wantRun(t, dir, exitOK, "deleted metrics sys.cpu.idle: 000002\n", "delete", "metrics", "sys.cpu.idle")
	errs = wantRun(t, dir, exitFailed, "", "delete", "metrics", "sys.cpu.idle")
	if !strings.Contains(errs, "No such name for 'metrics': 'sys.cpu.idle'") {
		t.Errorf("delete twice: %s", errs)
	}
	wantRun(t, dir, exitOK, `WARN metrics max-id-count-mismatch: Max ID for metrics is 2 but only 1 entries were found.  Maybe 1 IDs were deleted?
metrics: max id 2, 1 forward and 1 reverse mappings
tagk: max id 1, 1 forward and 1 reverse mappings
tagv: max id 0, 0 forward and 0 reverse mappings
6 cells analyzed; 0 errors found, 0 unfixed
`, "fsck")
}

func TestUIDCommandFsckRepairs(t *testing.T) {
	dir := t.TempDir()
	wantRun(t, dir, exitOK, "", "assign", "tagv", "web01", "web02")
	withStore(t, dir, func(tbl storage.Table) {
		err := tbl.Delete(context.Background(), []byte{0, 0, 2},
			storage.Deletion{Kind: storage.DeleteColumn, Family: uid.FamilyName, Qualifier: []byte("tagv")})
		if err != nil {
			t.Fatal(err)
		}
	})
	problem := "ERROR tagv forward-without-reverse: Forward tagv mapping is missing reverse mapping: web02 -> 000002"
	code, out, _ := tsdUID(t, dir, "fsck")
	if code != exitFailed || !strings.Contains(out, problem+"\n") || !strings.Contains(out, "1 errors found, 1 unfixed") {
		t.Fatalf("fsck: exit %d\n%s", code, out)
	}
	code, out, _ = tsdUID(t, dir, "fsck", "--fix")
	if code != exitOK || !strings.Contains(out, problem+" [fixed]\n") || !strings.Contains(out, "1 errors found, 0 unfixed") {
		t.Fatalf("fsck --fix: exit %d\n%s", code, out)
	}
	wantRun(t, dir, exitOK, "", "fsck", "fix")
}

// withStore opens the store directly, as a running daemon holds it.
func withStore(t *testing.T, dir string, fn func(uidTbl storage.Table)) {
	t.Helper()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl, err := db.Table(context.Background(), uid.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	fn(tbl)
}

func TestUIDCommandNeedsStoppedDaemon(t *testing.T) {
	dir := t.TempDir()
	wantRun(t, dir, exitOK, "", "assign", "metrics", "m")
	withStore(t, dir, func(storage.Table) {
		code, _, errs := tsdUID(t, dir, "grep")
		if code != exitFailed || !strings.Contains(errs, "stop the daemon first") {
			t.Errorf("grep on a locked store: exit %d, %s", code, errs)
		}
	})
}

func TestUIDCommandUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"rename", "metrics", "a"}, "usage: rename KIND NAME NEWNAME"},
		{[]string{"assign", "metric"}, "usage: assign KIND NAME..."},
		{[]string{"fsck", "now"}, "usage: fsck [fix]"},
		{[]string{"--no.such.key=1", "grep"}, `unknown config key "no.such.key"`},
	} {
		code, _, errs := tsdUID(t, dir, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, %s", tc.args, code, errs)
		}
	}
	code, _, errs := tsdUID(t, dir, "assign", "metrics", "ok", "bad\x01name")
	if code != exitFailed || !strings.Contains(errs, `Invalid metric name ("bad\x01name"): illegal character: U+0001`) {
		t.Errorf("bad name: exit %d, %s", code, errs)
	}
	code, out, _ := tsdUID(t, dir, "--help")
	if code != exitOK || !strings.Contains(out, "grep [KIND] [REGEXP]") {
		t.Errorf("help: %d %s", code, out)
	}
	code, _, errs = tsdUID(t, filepath.Join(dir, "missing"), "grep")
	if code != exitFailed || !strings.Contains(errs, "no store") {
		t.Errorf("missing store: %d %s", code, errs)
	}
}
