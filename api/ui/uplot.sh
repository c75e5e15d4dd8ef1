#!/bin/sh
# uplot.sh fetches the uPlot chart library the web UI draws with and
# copies the files the UI serves into static/uplot: the minified IIFE
# build, its stylesheet, the licence and a VERSION file. `go generate
# ./api/ui` runs it; it needs npm and the npm registry, which a build of
# tsd does not: the files it writes are committed and embedded.
#
# To move to another uPlot release, change UPLOT_VERSION, run
# `go generate ./api/ui`, check the pages (go test ./api/ui) and commit
# static/uplot.
set -eu
UPLOT_VERSION=1.6.32

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
(cd "$work" && npm pack --silent "uplot@$UPLOT_VERSION" >/dev/null && tar xzf "uplot-$UPLOT_VERSION.tgz")
out="$here/static/uplot"
mkdir -p "$out"
cp "$work/package/dist/uPlot.iife.min.js" "$work/package/dist/uPlot.min.css" "$work/package/LICENSE" "$out/"
printf '%s\n' "$UPLOT_VERSION" >"$out/VERSION"
