// Package promtsdb is the Prometheus peer of the bench: Prometheus's own
// tsdb (github.com/prometheus/prometheus/tsdb) and PromQL engine driven with
// the bench dataset, so tsd's figures are compared with Prometheus's in the
// same run on the same points.
//
// How the peer is used, and why:
//
//   - Appending: a DB opened with DefaultOptions (write-ahead log on, 2 h
//     head chunks of 120 samples), background compactions disabled so they
//     do not steal the second core from the timed loop. One goroutine
//     appends every point in time order through db.Appender, reusing the
//     storage.SeriesRef the first Append of each series returned, and
//     commits every 1,000 samples, as a scrape loop of 1,000 targets would.
//   - Block: the whole head is compacted into one block with CompactHead;
//     its chunks/ segments are the data bytes and its index file the index
//     bytes.
//   - PromQL: promql.NewEngine queries the DB after the block is written
//     (data at rest, as tsd's figures read flushed rows).
//
// Values are pre-generated into a slice before the clock starts, so the
// generator's cost is not in the append figure.
package promtsdb
