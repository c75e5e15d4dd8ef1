package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/schema"
)

// loadArgs loads a config from command-line args, with conf (if not empty)
// written to a temporary tsd.conf passed as --config. It returns the
// config, the log output and the load error.
func loadArgs(t *testing.T, conf string, args ...string) (*config, string, error) {
	t.Helper()
	if conf != "" {
		path := filepath.Join(t.TempDir(), "tsd.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--config", path}, args...)
	}
	c := newConfig()
	cl, err := parseArgs(args, c.isBoolFlag)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	err = c.load(cl, slog.New(slog.NewTextHandler(&logs, nil)))
	return c, logs.String(), err
}

func TestDefaults(t *testing.T) {
	c, logs, err := loadArgs(t, "")
	if err != nil || logs != "" {
		t.Fatalf("load: %v, logs %q", err, logs)
	}
	want := schema.DefaultSettings()
	if c.port != 4242 || c.bind != "0.0.0.0" || c.engine != "pebble" || c.dataDir != "./data" ||
		c.settings != want || !c.autoCreateMetrics || c.maxTags != 32 || c.dataTable != "tsdb" ||
		c.uidTable != "tsdb-uid" || c.metaTable != "tsdb-meta" || !c.noDieDieDie ||
		c.allowSpecialChars != "" || !c.bigtableCreate {
		t.Errorf("defaults: %+v", c)
	}
	if g := c.storeSettings().Given; g != 0 {
		t.Errorf("no setting given, but Given = %v", g)
	}
}

func TestFileThenFlags(t *testing.T) {
	conf := "tsd.network.port = 5000\n" +
		"tsd.storage.directory = /var/lib/tsd\n" +
		"tsd.storage.format = opentsdb\n" +
		"tsd.storage.salt.width = 0\n" +
		"tsd.core.auto_create_metrics = no\n" +
		"tsd.core.tag.allow_specialchars = !~/\n"
	c, _, err := loadArgs(t, conf, "--port", "6000", "--tsd.storage.uid.width.tagv=4")
	if err != nil {
		t.Fatal(err)
	}
	if c.port != 6000 || c.dataDir != "/var/lib/tsd" || c.settings.Format != schema.FormatOpenTSDB ||
		c.settings.SaltWidth != 0 || c.autoCreateMetrics || c.allowSpecialChars != "!~/" ||
		c.settings.Widths.TagV != 4 {
		t.Errorf("file then flags: %+v", c)
	}
	s := c.storeSettings()
	if want := schema.SettingFormat | schema.SettingSaltWidth | schema.SettingWidthTagV; s.Given != want {
		t.Errorf("Given = %v, want %v", s.Given, want)
	}
}

func TestOpenTSDBKeysWarn(t *testing.T) {
	conf := "tsd.network.port = 4242\n" +
		"tsd.http.staticroot = /usr/share/opentsdb/static/\n" +
		"tsd.http.cachedir = /tmp/opentsdb\n" +
		"tsd.storage.hbase.zk_quorum = localhost\n" +
		"hbase.rpc.timeout = 60000\n"
	c, logs, err := loadArgs(t, conf, "--tsd.network.worker_threads", "8")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tsd.http.staticroot", "tsd.http.cachedir", "tsd.storage.hbase.zk_quorum",
		"hbase.rpc.timeout", "tsd.network.worker_threads"} {
		if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "key="+key) {
			t.Errorf("no warning naming %s in:\n%s", key, logs)
		}
	}
	if c.port != 4242 {
		t.Errorf("port = %d", c.port)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		conf string
		args []string
		want string
	}{
		{"", []string{"--tsd.nope=1"}, `flag --tsd.nope: unknown config key "tsd.nope"`},
		{"# typo below\ntsd.network.prot = 1\n", nil, `tsd.conf:2: unknown config key "tsd.network.prot"`},
		{"", []string{"--port=abc"}, `flag --port: tsd.network.port = "abc": want an integer`},
		{"", []string{"--port=70000"}, `tsd.network.port = "70000": want 0..65535`},
		{"tsd.storage.salt.width = 9\n", nil, `tsd.conf:1: tsd.storage.salt.width = "9": want 0..8`},
		{"", []string{"--tsd.storage.engine=cassandra"}, `tsd.storage.engine = "cassandra": want one of pebble, bigtable`},
		{"", []string{"--tsd.storage.format=tsdb"}, `tsd.storage.format = "tsdb"`},
		{"", []string{"--tsd.no_diediedie=maybe"}, `tsd.no_diediedie = "maybe": want true or false`},
		{"", []string{"--tsd.storage.uid.width.metric=0"}, `tsd.storage.uid.width.metric = "0": want 1..8`},
		{"", []string{"--tsd.storage.engine=bigtable"}, `bigtable needs google.bigtable.project.id`},
		{"", []string{"--tsd.storage.salt.buckets=300"}, `tsd.storage.salt.buckets = 300: more buckets than`},
		// Aliases are for flags only; the file takes full names.
		{"port = 1\n", nil, `tsd.conf:1: unknown config key "port"`},
	} {
		_, _, err := loadArgs(t, tc.conf, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("conf %q args %q: error %v, want %q", tc.conf, tc.args, err, tc.want)
		}
	}
}

func TestKeyTable(t *testing.T) {
	c := newConfig()
	if len(c.byName) != len(c.keys) {
		t.Errorf("%d keys but %d distinct names", len(c.keys), len(c.byName))
	}
	aliases := map[string]bool{}
	for _, k := range c.keys {
		if isOpenTSDBKey(k.name) {
			t.Errorf("%s is both a tsd key and an ignored OpenTSDB key", k.name)
		}
		if k.desc == "" || k.typ == "" {
			t.Errorf("%s lacks a description or type", k.name)
		}
		if err := k.set(k.def); err != nil {
			t.Errorf("%s: its default %q does not parse: %v", k.name, k.def, err)
		}
		if k.alias != "" && (aliases[k.alias] || c.byName[k.alias] != nil) {
			t.Errorf("alias %s is taken twice", k.alias)
		}
		aliases[k.alias] = true
	}
}

func TestHelpListsEveryKey(t *testing.T) {
	c := newConfig()
	var out bytes.Buffer
	writeHelp(&out, c)
	for _, k := range c.keys {
		if !strings.Contains(out.String(), "  "+k.name+" ("+k.typ) ||
			!strings.Contains(out.String(), k.desc+" [default "+strconv.Quote(k.def)+"]") {
			t.Errorf("--help lacks %s with its default %q", k.name, k.def)
		}
	}
}

func TestParseValues(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "1h30m": 90 * time.Minute, "7d": 7 * 24 * time.Hour,
		"2w": 14 * 24 * time.Hour, "0d": 0, "0": 0,
	} {
		if got, err := parseDuration(s); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "d", "-1d", "1.5d", "-5s", "forever", "999999999999d"} {
		if _, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) accepted", s)
		}
	}
	for s, want := range map[string]bool{"TRUE": true, "yes": true, "1": true, "False": false, "no": false, "0": false} {
		if got, err := parseBool(s); err != nil || got != want {
			t.Errorf("parseBool(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := parseBool("on "); err == nil {
		t.Error(`parseBool("on ") accepted`)
	}
	if got := formatDuration(48 * time.Hour); got != "2d" {
		t.Errorf("formatDuration(48h) = %q", got)
	}
}
