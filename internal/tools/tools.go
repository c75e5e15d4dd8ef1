//go:build tools

// Package tools pins modules that tsd packages are about to import, so
// `go mod tidy` keeps them while the code that needs them lands.
package tools

import (
	_ "cloud.google.com/go/bigtable"
	_ "cloud.google.com/go/bigtable/bttest"
	_ "github.com/RoaringBitmap/roaring/v2"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/cockroachdb/pebble/v2/vfs"
	_ "github.com/influxdata/line-protocol/v2/lineprotocol"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/klauspost/compress/snappy"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/prometheus/prometheus/prompb"
	_ "github.com/prometheus/prometheus/promql"
	_ "github.com/prometheus/prometheus/promql/parser"
	_ "github.com/prometheus/prometheus/promql/promqltest"
	_ "github.com/prometheus/prometheus/tsdb"
	_ "github.com/prometheus/prometheus/tsdb/chunkenc"
	_ "github.com/valyala/fasthttp"
	_ "go.uber.org/goleak"
	_ "rsc.io/binaryregexp"
)
