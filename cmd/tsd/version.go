package main

import (
	"fmt"
	"io"
	"runtime"
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

// unknown is what a version field says when the build did not record it
// (go run, -buildvcs=false, a build outside a git checkout): a client
// parsing /api/version then sees a word, never an empty field it could
// take for a value.
const unknown = "unknown"

// versionInfo returns what /api/version, telnet version and tsd version
// report: the link-time facts above plus what the Go toolchain stamped
// into the binary (its module version, and the commit, its time and the
// modified flag when built in a git checkout).
func versionInfo() api.VersionInfo {
	v := api.VersionInfo{Version: version, Branch: branch, User: buildUser, Host: buildHost,
		Repo: "github.com/tsd-db/tsd"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "devel" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			applyBuildSetting(&v, s.Key, s.Value)
		}
	}
	for _, f := range []*string{&v.ShortRevision, &v.FullRevision, &v.Timestamp, &v.RepoStatus, &v.User, &v.Host, &v.Branch} {
		if *f == "" {
			*f = unknown
		}
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

// writeVersion prints tsd version's answer: the fields of /api/version,
// one "name: value" line each, then the Go toolchain and platform.
func writeVersion(w io.Writer, v api.VersionInfo) {
	date := v.Timestamp
	if s, err := strconv.ParseInt(v.Timestamp, 10, 64); err == nil {
		date = time.Unix(s, 0).UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "tsd %s\nrevision: %s\nrevision time: %s\nrepo status: %s\nbranch: %s\nbuilt by: %s@%s\nrepo: %s\ngo: %s %s/%s\n",
		v.Version, v.FullRevision, date, v.RepoStatus, v.Branch, v.User, v.Host, v.Repo,
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// versionUsage documents tsd version.
const versionUsage = `Usage: tsd version | tsd --version

Prints the build's version and source revision, as /api/version and the
telnet version command report them:
  tsd VERSION              the module version (devel unless a release set it)
  revision: HASH           the git commit the binary was built from
  revision time: TIME      that commit's time, RFC 3339 in UTC
  repo status: MINT        MODIFIED when the checkout had uncommitted changes
  branch: NAME             set at link time (-X main.branch=...)
  built by: USER@HOST      set at link time
  repo: PATH
  go: GOVERSION OS/ARCH
A field the build did not record says "unknown": the revision, its time
and the status are stamped by go build in a git checkout, and not by go run
or a build with -buildvcs=false.
`

// runVersion is tsd version.
func runVersion(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(stdout, versionUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "tsd version: unexpected argument %q\nRun 'tsd version --help' for usage.\n", a)
		return exitUsage
	}
	writeVersion(stdout, versionInfo())
	return exitOK
}
