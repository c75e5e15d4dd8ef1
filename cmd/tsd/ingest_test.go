package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// scanPoints stops nothing: it runs `tsd scan` on a stopped daemon's
// directory and returns the decoded points of metric as "ms value kind"
// lines, plus the row headers' tag sets.
func scanPoints(t *testing.T, dir, metric string) []string {
	t.Helper()
	code, out, errs := tsdScan(t, dir, "1356998400", "1893456000", metric)
	if code != exitOK {
		t.Fatalf("tsd scan %s: exit %d\n%s\n%s", metric, code, out, errs)
	}
	var pts []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "    ") && len(f) == 4 {
			pts = append(pts, f[0]+" "+f[2]+" "+f[3])
		}
	}
	return pts
}

// telnetSession sends lines and returns the reply lines read until the
// reply to the final "version" (the durability barrier) is complete.
func telnetSession(t *testing.T, addr string, lines ...string) []string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var in strings.Builder
	for _, l := range append(lines, "version") {
		in.WriteString(l + "\n") // no empty line: OpenTSDB answers one as an unknown command
	}
	if _, err := c.Write([]byte(in.String())); err != nil {
		t.Fatal(err)
	}
	var got []string
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read after %q: %v", got, err)
		}
		got = append(got, strings.TrimSuffix(line, "\n"))
		if strings.HasPrefix(line, "Built on ") {
			return got
		}
	}
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDaemonTelnetIngest(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	long := "put sys.cpu.user 1356998405 1 host=" + strings.Repeat("x", 70<<10)
	got := telnetSession(t, d.Addr,
		"put sys.cpu.user 1356998400 42 host=web01",
		"put sys.cpu.user 1356998401",
		"put sys.cpu.user 1356998401 42.5 host=web01",
		long,
		"put sys.cpu.user 1356998402000 0.1 host=web01",
		"help", "dropcaches", "nope", "diediedie",
		"put sys.cpu.user 1356998403 -7 host=web02",
	)
	version := got[len(got)-2:]
	if !strings.HasPrefix(version[0], "tsd ") || !strings.Contains(version[0], " built at revision ") {
		t.Errorf("version reply %q", version)
	}
	equalLines(t, "telnet replies", got[:len(got)-2], []string{
		"put: illegal argument: not enough arguments (need least 3, got 2)",
		"error: line too long: over 65536 bytes",
		"available commands: stats dropcaches version exit help put rollup histogram ",
		"Caches dropped.",
		"unknown command: nope.  Try `help'.",
		"diediedie: disabled (tsd.no_diediedie=true)",
	})
	// tcollector's heartbeat: version alone on a long-lived connection.
	if got := telnetSession(t, d.Addr); len(got) != 2 {
		t.Errorf("heartbeat version = %q", got)
	}
	if err := d.Stop(t); err != nil {
		t.Fatalf("stop: %v\n%s", err, d.Logs)
	}
	equalLines(t, "stored points", scanPoints(t, data, "sys.cpu.user"), []string{
		"1356998400000 42 int", "1356998401000 42.5 float32", "1356998402000 0.1 float64",
		"1356998403000 -7 int",
	})
}

func TestDaemonTelnetDieDieDie(t *testing.T) {
	data := t.TempDir()
	d := startDaemon(t, "--data", data, "--tsd.no_diediedie=false")
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	c.Write([]byte("put die.m 1356998400 5\ndiediedie\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	if line != "Cleaning up and exiting now.\n" {
		t.Fatalf("diediedie reply %q (%v)", line, err)
	}
	if err, exited := d.Wait(30 * time.Second); !exited {
		t.Fatalf("tsd still running 30s after diediedie\n%s", d.Logs)
	} else if err != nil {
		t.Fatalf("tsd exited with %v after diediedie\n%s", err, d.Logs)
	}
	equalLines(t, "stored points", scanPoints(t, data, "die.m"), []string{"1356998400000 5 int"})
}

func TestIngestConfigKeys(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--tsd.storage.retention=tmp.*:1x", "tsd.storage.retention"},
		{"--tsd.storage.head.max_memory=lots", "tsd.storage.head.max_memory"},
		{"--tsd.network.telnet.max_line=10", "tsd.network.telnet.max_line"},
	} {
		out, code := runTSD(t, tc.arg)
		if code != exitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("tsd %s: exit %d, output:\n%s", tc.arg, code, out)
		}
	}
	for in, want := range map[string]int64{"2GiB": 2 << 30, "512MiB": 512 << 20, "1000": 1000, "1GB": 1e9, "-1": -1} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if got := formatBytes(2 << 30); got != "2GiB" {
		t.Errorf("formatBytes(2 GiB) = %q", got)
	}
}
