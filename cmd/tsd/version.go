package main

import (
	"runtime/debug"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/api"
)

// Build facts a release sets at link time, for example
// go build -ldflags "-X main.version=0.1.0 -X main.branch=main -X main.buildUser=$USER -X main.buildHost=$(hostname)".
var (
	version   = "devel"
	branch    = ""
	buildUser = ""
	buildHost = ""
)

// versionInfo returns what /api/version reports: the link-time facts above
// plus the commit the Go toolchain stamped into the binary, when it did
// (go build in a git checkout; not go run).
func versionInfo() api.VersionInfo {
	v := api.VersionInfo{Version: version, Branch: branch, User: buildUser, Host: buildHost,
		Repo: "github.com/tsd-db/tsd"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "devel" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		applyBuildSetting(&v, s.Key, s.Value)
	}
	return v
}

// applyBuildSetting copies one vcs.* build setting into v.
func applyBuildSetting(v *api.VersionInfo, key, value string) {
	switch key {
	case "vcs.revision":
		v.FullRevision, v.ShortRevision = value, value[:min(7, len(value))]
	case "vcs.time":
		if t, err := time.Parse(time.RFC3339, value); err == nil {
			v.Timestamp = strconv.FormatInt(t.Unix(), 10)
		}
	case "vcs.modified":
		v.RepoStatus = "MINT"
		if value == "true" {
			v.RepoStatus = "MODIFIED"
		}
	}
}
