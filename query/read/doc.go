// Package read fetches the points of selected series for the query
// engines (OpenTSDB's /api/query in package query/opentsdb, PromQL in query/promql):
// it reads the data table's hour rows, decodes every column format with
// rowkey.RowDecoder and merges the write path's unflushed points, which it
// reaches through the Head interface it defines (wired to ingest.Head in
// cmd/tsd; query never imports ingest).
//
// # Plans
//
// A selection is one metric's series (index.Series, from the series index)
// and a time range. Read chooses between two plans by estimated cost:
//
//   - per series: one Get per hour row of each selected series, the hours
//     bounded by the series' span in the index and the range, the salt
//     computed from the TSUID. Cost: a random read per row.
//   - metric scan: one Scan per salt bucket over [bucket][metric][start
//     hour] to [bucket][metric][end hour + 1), the buckets in parallel,
//     keeping rows whose TSUID is selected. Cost: every row of the metric
//     in the range, sequentially.
//
// Per series wins when the selection is a small part of the metric (a
// filter picking 10 series out of 100,000); the scan wins when the query
// reads most of the metric. Selection.Plan can force either (benchmarks
// compare them).
//
// # Visit
//
// Visit serves a consumer that folds points as they come (the OpenTSDB
// engine's downsampling): it gives each selected series' points a row at a
// time, in time order, merged with the head's rows (read first, for the
// whole selection), from the scan's bucket goroutines or the per-series
// workers (head rows after a series' last stored row from workers too),
// so a series is never held whole. The per-series plan runs on
// the caller's goroutine when it has at most a few rows to Get (one
// series, or a handful of rows), as Read does: starting workers would cost
// more than the reads.
//
// # Lazy iterators
//
// Iterator and Fetch serve engines that walk one series at a time
// (PromQL): a SeriesIterator decodes one hour row when the walk reaches it
// and hands it out whole (NextBatch) or point by point. Under the
// per-series plan it Gets its rows as it goes. Under the scan plan Fetch
// scans the metric's buckets at once and keeps the selected rows' cells
// still encoded (a few bytes per point, at most Options.MaxFetchBytes,
// beyond which it falls back to Gets); the iterators decode from there. An
// iterator returns its decoder to the Reader once it has read its last
// row, and a reused iterator keeps its row buffer. With Selection.Notes a
// fetched iterator also gives its series' annotations (Notes): the scan
// keeps a row's annotation cells as it ends, the per-series iterators
// take them from the rows they Get (the OpenTSDB engine reads raw points
// this way, a group at a time).
//
// # Merging with the head
//
// The head is read before the store: a row leaves the head only after its
// write to the store is acknowledged, so a point is always in one or the
// other. A point found in both keeps the head's value (the newer write).
// Read and last-point reads take the head's points of the range up
// front. Visit, Fetch (before its scan) and a SeriesIterator (when it
// starts; under Fetch's scan plan, Fetch's) read the head's rows of the
// range up front instead, each under a fingerprint of its points
// (Head.AppendRows), from the row cache when it holds them, and merge
// each with the stored row of its hour.
//
// # Row cache
//
// Decoding is most of a query's CPU (rANS-coded dense cells cost 13-17 ns
// a point), and dashboards read the same rows again at every refresh. The
// Reader keeps decoded rows (Options.RowCacheBytes, 24 bytes a point, LRU
// in 16 shards) keyed by a 64-bit maphash of the row key and every cell the
// store returned: qualifier, value and cell timestamp. A row whose cells
// change in any way (a late flush adds a cell, compaction rewrites one) has
// a new fingerprint, so a cached row is never stale; entries also keep the
// key and cell count, so only a full 64-bit collision between two versions
// of one row's contents could return wrong points. A row enters on its
// second read, so a one-off export does not evict what dashboards reuse.
// Cached points are shared: Visitor.Points and NextBatch hand them out
// without a copy, and their consumers only read them. Fetch's scan looks a
// row up as soon as the row ends, so a hit keeps no cells in its arena.
// An entry whose points are all Ints with n × the largest magnitude at
// most 2^53 also keeps their exact sum: SeriesIterator.BatchSum gives the
// sum of the rest of such a row (the row's sum less the points before
// it), which is bit for bit what adding them one by one gives, so a
// pushed-down sum or avg over a window holding most of a row need not
// read its points; Visit gives such a row to a SumVisitor with its sum,
// for OpenTSDB's sum and avg downsampling.
//
// Head rows are cached the same way, keyed by the head's fingerprint of
// the row (which changes with every point added or replaced, so a cached
// head row is never stale either) under its TSUID and base, with a cell
// count of -1 that no stored row has. Right after a bulk load every row
// is still in the head, and a dashboard's refresh then costs what it
// costs on stored rows, sums included. Read does not use head entries:
// it merges the head's points after the lookup.
//
// # Limits
//
// A Budget counts the series, points and decoded bytes of one query across
// its plans and goroutines; the first limit crossed stops the read with a
// *LimitError (errors.Is ErrLimit) naming the limit, so a query never holds
// more than its limits in memory.
//
// # Retention and corrupt cells
//
// With Options.Retention, points older than their metric's cutoff are
// never returned, even before the retention job deletes them. A cell that
// does not decode is skipped, logged and counted (Stats.CorruptCells); the
// rest of its row is returned.
package read
