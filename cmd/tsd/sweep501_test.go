package main

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/api"
)

// may501 are the routes that may answer 501 on the daemon, and why. Every
// other route must not: OpenTSDB answers 501 only for an API version above
// 1 and for /api/uid and /api/uid/<anything but assign, rename, uidmeta,
// tsmeta> (UniqueIdRpc's "Other UID endpoints have not been implemented
// yet"), both checked below; tsd has no plugin-only route.
// Trees and histograms were its last entries; it stays for a route that
// OpenTSDB itself answers 501 on.
var may501 = map[string]string{}

// subRoutes are sub-endpoints routeRoles does not list on their own line.
var subRoutes = []string{
	"/api/stats/jvm", "/api/stats/threads", "/api/stats/region_clients",
	"/api/search/lookup", "/api/search/tsmeta", "/api/search/tsmeta_summary", "/api/search/tsuids",
	"/api/search/uidmeta", "/api/search/annotation",
	"/api/query/last", "/api/query/exp",
	"/api/tree/branch", "/api/tree/rule", "/api/tree/rules", "/api/tree/test", "/api/tree/collisions", "/api/tree/notmatched",
}

// TestDaemonNo501: every route of the route table (api.RouteNames, the
// list access control and docs/operations.md use) and the sub-endpoints,
// under GET, POST, PUT and DELETE with no parameters or body (and under
// /prometheus for the Prometheus paths), answers something other than
// 501 on the real daemon, with rollups on (the default) and off, except
// the routes of may501; OpenTSDB's own 501s still answer 501.
func TestDaemonNo501(t *testing.T) {
	for _, rollups := range []string{"true", "false"} {
		t.Run("rollups="+rollups, func(t *testing.T) {
			d := startDaemon(t, "--data", t.TempDir(), "--tsd.rollups.enable="+rollups)
			checkNo501(t, d)
		})
	}
}

func checkNo501(t *testing.T, d *daemon) {
	paths := append([]string(nil), subRoutes...)
	for _, name := range api.RouteNames() {
		p := strings.Replace(name, "<name>", "__name__", 1)
		paths = append(paths, p)
		if strings.HasPrefix(p, "/api/v1/") {
			paths = append(paths, "/prometheus"+p)
		}
	}
	if len(paths) < 60 {
		t.Fatalf("only %d routes to walk", len(paths))
	}
	for _, p := range paths {
		allowed := ""
		if p == "/api/uid" {
			allowed = "OpenTSDB's UniqueIdRpc answers 501 without a sub-endpoint"
		}
		for prefix, why := range may501 {
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				allowed = why
			}
		}
		for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
			resp, body := post(t, m, "http://"+d.Addr+p, nil, false)
			if resp.StatusCode == 501 && allowed == "" {
				t.Errorf("%s %s = 501 %s", m, p, body)
			}
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/api/v2/query", "Requested API version is greater than the max implemented"},
		{"/api/v3/put", "Requested API version is greater than the max implemented"},
		{"/api/uid/nope", "Other UID endpoints have not been implemented yet"},
		{"/api/uid", "Other UID endpoints have not been implemented yet"},
	} {
		if resp, body := post(t, "GET", "http://"+d.Addr+c.path, nil, false); resp.StatusCode != 501 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s = %d %s, want OpenTSDB's 501 %q", c.path, resp.StatusCode, body, c.want)
		}
	}
}

// TestDaemonTelnetHelp: every command telnet help lists works: run bare,
// none answers an unknown command or a refusal for not being built, and
// exit closes the connection without a reply; with rollups on and off.
func TestDaemonTelnetHelp(t *testing.T) {
	for _, rollups := range []string{"true", "false"} {
		t.Run("rollups="+rollups, func(t *testing.T) {
			checkTelnetHelp(t, startDaemon(t, "--data", t.TempDir(), "--tsd.rollups.enable="+rollups))
		})
	}
}

func checkTelnetHelp(t *testing.T, d *daemon) {
	lines := telnetSession(t, d.Addr, "help")
	list, ok := strings.CutPrefix(lines[0], "available commands: ")
	if !ok {
		t.Fatalf("help = %q", lines[0])
	}
	cmds := strings.Fields(list)
	if len(cmds) < 7 {
		t.Fatalf("help lists %q", cmds)
	}
	for _, cmd := range cmds {
		if cmd == "exit" || cmd == "diediedie" {
			continue
		}
		for _, l := range telnetSession(t, d.Addr, cmd) {
			low := strings.ToLower(l)
			if strings.Contains(low, "unknown command") || strings.Contains(low, "not implemented") ||
				strings.Contains(low, "not supported") || strings.Contains(low, "not enabled") {
				t.Errorf("%s answers %q", cmd, l)
			}
		}
	}
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.Write([]byte("exit\n"))
	if rest, err := io.ReadAll(bufio.NewReader(c)); err != nil || len(rest) != 0 {
		t.Errorf("exit answered %q (%v), want the connection closed", rest, err)
	}
}
