package main

import (
	"testing"

	"github.com/tsd-db/tsd/api"
)

// TestTelnetVersion: the telnet version reply has the shape of OpenTSDB's
// BuildData.revisionString and buildString (build-aux/gen_build_data.sh):
// "<package> <version> built at revision <short> (<status>)" and
// "Built on <yyyy/MM/dd HH:mm:ss +0000> by <user>@<host>:<repo>".
func TestTelnetVersion(t *testing.T) {
	v := api.VersionInfo{Version: "0.1.0", ShortRevision: "abc1234", RepoStatus: "MINT",
		Timestamp: "1631000000", User: "builder", Host: "ci01", Repo: "github.com/tsd-db/tsd"}
	want := "tsd 0.1.0 built at revision abc1234 (MINT)\nBuilt on 2021/09/07 07:33:20 +0000 by builder@ci01:github.com/tsd-db/tsd"
	if got := telnetVersion(v); got != want {
		t.Errorf("telnetVersion =\n%s\nwant\n%s", got, want)
	}
}
