package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/internal/daemontest"
)

// versionFacts reads tsd version's answer, --version's (which must be the
// same), /api/version and the telnet version reply of a daemon run from
// bin.
func versionFacts(t *testing.T, bin string) (lines map[string]string, api map[string]string, telnet string) {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("tsd version: %v", err)
	}
	out2, err := exec.Command(bin, "--version").Output()
	if err != nil || string(out2) != string(out) {
		t.Errorf("tsd --version = %q (%v), want tsd version's %q", out2, err, out)
	}
	lines = map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		lines[k] = v
	}
	d := daemontest.StartCommand(t, exec.Command(bin, "--port=0", "--tsd.network.bind=127.0.0.1", "--data", t.TempDir()))
	code, body := d.Get(t, "/api/version")
	if err := json.Unmarshal([]byte(body), &api); code != 200 || err != nil {
		t.Fatalf("/api/version = %d %s (%v)", code, body, err)
	}
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	c.Write([]byte("version\n"))
	r := bufio.NewReader(c)
	for !strings.HasPrefix(telnet, "Built on") || !strings.Contains(telnet, "\nBuilt on") {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("telnet version: %v after %q", err, telnet)
		}
		if telnet += l; strings.HasPrefix(l, "Built on") {
			break
		}
	}
	d.Stop(t)
	return lines, api, telnet
}

// TestVersionUnknownWithoutVCS: the test binary is built with
// -buildvcs=false, so the revision, its time and status say "unknown" in
// tsd version, /api/version and telnet version, never "".
func TestVersionUnknownWithoutVCS(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	lines, api, telnet := versionFacts(t, tsdBinary(t))
	for _, k := range []string{"revision", "revision time", "repo status", "branch"} {
		if lines[k] != "unknown" {
			t.Errorf("tsd version %s = %q, want unknown", k, lines[k])
		}
	}
	for _, k := range []string{"short_revision", "full_revision", "timestamp", "repo_status", "user", "host", "branch"} {
		if api[k] != "unknown" {
			t.Errorf("/api/version %s = %q, want unknown", k, api[k])
		}
	}
	if !strings.Contains(telnet, "built at revision unknown (unknown)\nBuilt on unknown by unknown@unknown:github.com/tsd-db/tsd") {
		t.Errorf("telnet version = %q", telnet)
	}
}

// TestVersionFromVCS builds tsd with -buildvcs=true from a git checkout
// and finds the commit, its time and the status everywhere. Go stamps
// only a checkout whose .git is a directory, so from a git worktree (.git
// a file) the test builds a shared clone of HEAD with the worktree's files
// copied over it (MODIFIED when they differ from HEAD).
func TestVersionFromVCS(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	top := git(".", "rev-parse", "--show-toplevel")
	head := git(top, "rev-parse", "HEAD")
	src := top
	if fi, err := os.Stat(filepath.Join(top, ".git")); err != nil || !fi.IsDir() {
		src = filepath.Join(t.TempDir(), "src")
		git(top, "clone", "-q", "--shared", "--no-checkout", top, src)
		git(src, "checkout", "-q", head)
		copyWorkTree(t, top, src, git(top, "ls-files", "--cached", "--others", "--exclude-standard"))
	}
	wantStatus := "MINT"
	if git(src, "status", "--porcelain") != "" {
		wantStatus = "MODIFIED"
	}
	bin := filepath.Join(t.TempDir(), "tsd")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/tsd")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	when, err := time.Parse(time.RFC3339, git(src, "show", "-s", "--format=%cI", head))
	if err != nil {
		t.Fatal(err)
	}
	lines, api, telnet := versionFacts(t, bin)
	if lines["revision"] != head || lines["revision time"] != when.UTC().Format(time.RFC3339) {
		t.Errorf("tsd version: revision %q at %q, want %s at %s", lines["revision"], lines["revision time"], head, when.UTC().Format(time.RFC3339))
	}
	status := lines["repo status"]
	if status != wantStatus {
		t.Errorf("repo status %q, want %s", status, wantStatus)
	}
	if api["full_revision"] != head || api["short_revision"] != head[:7] || api["repo_status"] != status ||
		api["timestamp"] != itoa(int(when.Unix())) {
		t.Errorf("/api/version = %v, want revision %s", api, head)
	}
	if !strings.Contains(telnet, "built at revision "+head[:7]+" ("+status+")\nBuilt on "+when.UTC().Format("2006/01/02 15:04:05 +0000")) {
		t.Errorf("telnet version = %q", telnet)
	}
}

// copyWorkTree copies the files listed (one a line, relative to from) to to.
func copyWorkTree(t *testing.T, from, to, list string) {
	t.Helper()
	for _, name := range strings.Split(list, "\n") {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			continue // deleted in the worktree
		}
		dst := filepath.Join(to, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
