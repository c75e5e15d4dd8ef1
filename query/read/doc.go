// Package read fetches the points of selected series for the query
// engines (OpenTSDB's /api/query in package query/opentsdb, PromQL in
// query/promql): it reads the data table's hour rows, decodes every column
// format with rowkey.RowDecoder and merges the write path's unflushed
// points, which it reaches through the Head interface it defines (wired to
// ingest/head's Head in cmd/tsd; query never imports ingest).
//
// # Plans
//
// A selection is one metric's series (index.Series, from the series index)
// and a time range. The planner (Reader.Choose) picks one of two plans by
// estimated cost, for every surface:
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
// # The core
//
// Every surface reads through one core (cursor.go): a cursor walks one
// series' hour rows in time order and gives each as a row of decoded
// points in the range, the stored row of the hour merged with the head's
// row of that hour (mergeRow, the one place the two meet; see Merging
// with the head), a head row of an hour without a stored row alone. Its
// stored rows come from either plan: a Get per hour (per series), the
// rows Fetch's bucket scans kept still encoded, or the rows a bucket scan
// pushes into it as they arrive (scan). Every stored row passes through
// the row cache and the budget on its way (rowReader.view).
//
// The surfaces are adapters over it:
//
//   - Read and Visit push every series' rows to a sink (stream.go): the
//     selection's head rows are read first, then the per-series plan runs
//     each series' cursor to its end on Parallelism workers (on the
//     caller's goroutine when there are at most a few rows to Get, where
//     workers would cost more than the reads), or the scan plan's bucket
//     goroutines push each selected row into its series' cursor and a last
//     pass gives each series its head rows after its last stored row.
//     Visit hands each row to a Visitor (with its exact sum to a
//     SumVisitor when the row cache has one), so a consumer folding points
//     (the OpenTSDB engine's downsampling) never holds a series whole;
//     Read gathers each series' rows and gives the series whole when the
//     read is done.
//   - Iterator and Fetch serve engines that walk one series at a time
//     (PromQL, and the OpenTSDB engine's raw points, a group at a time): a
//     SeriesIterator pulls one row from its cursor when the walk reaches
//     it and hands it out whole (NextBatch) or point by point. Under the
//     per-series plan it Gets its rows as it goes and reads its series'
//     head rows when it starts. Under the scan plan Fetch reads the
//     selection's head rows, then scans the metric's buckets at once and
//     keeps the selected rows' cells still encoded (a few bytes per point,
//     at most Options.MaxFetchBytes with the head rows' copies, beyond
//     which it falls back to Gets); the iterators decode from there. An
//     iterator returns its decoder to the Reader once it has read its last
//     row, and a reused iterator keeps its row buffer. With
//     Selection.Notes a fetched iterator also gives its series'
//     annotations (Notes): the scan keeps a row's annotation cells as it
//     ends, the per-series iterators take them from the rows they Get.
//   - Last reads one series' newest head row with points in the range,
//     then asks its cursor for the hours from the range's end down, a Get
//     each, until a row has a point in the range, at the latest at that
//     head row's hour.
//   - Histograms reads the OpenTSDB histogram cells (06 qualifiers) of
//     each selected series, a Get per hour row; the head holds none, so
//     the store alone answers (histograms.go).
//   - VisitCells reads the rollup cells of one interval (Options.Rollups,
//     formats in package rollup) for a consumer folding them into
//     downsampling buckets (rollup.go; see Rollups).
//   - PointsAt reads each selected series' point at given times (edges.go):
//     the rows holding them by a scan per bucket or a Get each, a dense
//     row's first point from its header (rowkey.DenseIter.First), the
//     head's hours through a SeriesIterator. PromQL's rollup windows need
//     the raw points on their edges.
//
// # Order
//
// The core gives each series' rows in time order, a row's points sorted
// with one per timestamp, so a series' points arrive sorted and each once;
// a series' rows come from one goroutine at a time, and different series
// are read at once, in no fixed order. On top of that: Read calls its
// Func once per series with the series whole, in the selection's order,
// on the caller's goroutine (so an answer adding floats across series
// adds them in one order every time); Visit calls its Visitor for a
// series' rows in the core's order (calls for different series may run
// at once) and gives its notes after its last row; a SeriesIterator
// walks its series in the core's order; Last's answer is the newest
// point of the merged rows.
//
// # Merging with the head
//
// The head is read before the store: a row leaves the head only after its
// write to the store is acknowledged, so a point is always in one or the
// other. A point found in both keeps the head's value (the newer write).
// Head rows are read as the head lists them (Head.AppendRows), each under
// a fingerprint of its points, from the row cache when it holds them:
// for the whole selection before any Get or scan by Read, Visit and
// Fetch's scan plan, for its series when it starts by a SeriesIterator
// that Gets, and the newest row alone by Last. A row the cache does not
// give is copied then: a row whose hour is over as its encoded snapshot
// (Head.AppendRowChunk, a few bytes a point), decoded only when the
// cursor reaches it, into the cursor's own buffer; a row still filling
// decoded at once. A cold read of many rows so holds a few bytes a point
// until it gets to them, not 24 (Fetch's bound still counts a snapshot at
// its decoded size, so a lazy stream keeps what it kept before).
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
// of one row's contents could return wrong points. A stored row enters on
// its first read while the cache has room for it; once the cache is full,
// on its second, so a one-off export does not evict what dashboards reuse.
// Cached points are shared: Visitor.Points and NextBatch hand them out
// without a copy, and their consumers only read them. Fetch's scan looks a
// row up as soon as the row ends, so a hit keeps no cells in its arena.
// An entry whose points are all Ints with n × the largest magnitude at
// most 2^53 also keeps their exact sum: any run of its points then sums
// exactly, bit for bit what adding them one by one gives. An entry of at
// least 64 Int points keeps, for each 32 points, their smallest value,
// their largest and their sum (three quarters of a byte a point).
// SeriesIterator.BatchSum gives the sum of any span of the rest of such a
// row from the blocks it covers and, for the two it cuts, the points it
// takes or the block's sum less those it leaves, whichever are fewer; so
// a pushed-down sum or avg reads at most half a block at each end of a
// window, whether or not the window lines up with the rows (a query
// whose start is not on the hour). Visit gives such a row to a
// SumVisitor with its sum, for OpenTSDB's sum and avg downsampling.
// SeriesIterator.BatchExtremes gives a span's extremes from the blocks
// it covers and the points of the two it cuts, for pushed-down
// max_over_time and min_over_time.
//
// With Options.Changes (internal/changes), which a daemon sets when it
// alone writes its store, a row read by Get need not be read again
// (trust.go). Every writer of the data table marks the hours of the rows
// it wrote once they are stored: the flusher and the compactor per
// batch (as moves, which the PromQL answer cache does not heed),
// deletes, histogram and rollup points, the retention job. A Get
// takes the tracker's generation before it reads; while nothing is
// marked in the row's hour since, the row's cache entry (or the fact
// that the Get found no row) answers for it. Fetch's bucket scans
// record each hour they read whole the same way (every row met was
// selected and had its cache entry, or the hour had no row): a later
// fetch of that bucket's hour, for the same series or fewer, takes the
// entries and scans nothing (fetchtrust.go). A dashboard's refresh of
// settled hours then costs no store read at all. Eviction gives a row the
// trust index answered a second chance at the front of the LRU list
// (cacheEntry.ref), so those answers take no lock per row.
//
// A SeriesIterator reading by Gets that met every hour of its range
// leaves one record for the series (trustseries.go): each hour's stored
// row (its entry, or none) and the head rows it read with their entries.
// The next walk over those hours or fewer takes its rows from the record
// by position, after one lookup for the series: its stored rows while no
// hour of it is marked since the recording walk began (checked once the
// walk has read the head, so a flush that emptied the head meanwhile is
// seen), its head rows while the head lists each with the same
// fingerprint. A read of many series' head rows before a scan or a
// stream (readHeadRows) finds and records each series' head rows in the
// same record, keeping its stored rows. The lookups a row at a time,
// scattered through memory, were about a sixth of a warm query over many
// series' hours.
//
// Head rows are cached the same way, keyed by the head's fingerprint of
// the row (its identity and change count, which move with every point
// added, replaced or deleted, so a cached head row is never stale either)
// under its TSUID and base, with a cell count of -1 that no stored row
// has. A head row whose hour is over enters on its first read (recent
// data, which dashboards read again). Right after a bulk load every row
// is still in the head, and a dashboard's refresh then costs what it
// costs on stored rows, sums included.
//
// A flush hands a cached head row on to the stored row it writes from it
// (RowMoved, moved.go): the flusher names the row's head fingerprint and
// the one column it wrote, and the entry is kept again under the stored
// row's fingerprint of its key and that column, no longer as a head row.
// A dashboard's last hours are what a flush writes and what it reads at
// every refresh; without the hand-over each flush made the next refresh
// decode them again. A stored row with other columns too fingerprints
// otherwise and is decoded as before.
//
// New entries take their memory from a reserve (reserve.go,
// Options.RowCacheReserve): blocks a background filler allocates and
// faults in before a query needs them, from the first read on, at most
// one per 2 ms, a piece at a time, pausing for a read that begins
// (Reader.Reading hears of reads the reader never sees, such as answers
// from the PromQL answer cache). A row that finds the reserve empty is read as if uncached,
// and a later read admits it. The first queries after a bulk load would
// otherwise spend their time faulting in the pages of the entries they
// fill (about 12 µs a page on a VM, ten times a warm query's whole cost
// for a dashboard's 10 MB of rows).
//
// # Rollups
//
// VisitCells answers with cells what a Visit folding the same range into
// the interval's cells would: each series' cells sorted by time, one per
// interval, each the fold of the series' raw points in it. A cell is read
// from the rollup table (a Get per rollup row and series, the rows within
// the series' span in the index) only where its interval lies whole in
// the range and no selected series has a head row in it; the rest, the
// partial intervals at the range's edges and every interval holding a
// head row, is read raw through the core (Visit over those ranges) and
// folded with rollup.Fold. The head is listed before anything is read: a
// row leaves the head only after its rollup cells are written (package
// ingest/flush), so an interval without a head row has cells that hold
// every stored point, and one with a head row is read raw, store and head
// merged, as the raw path would. The answer therefore never depends on
// whether a flush has happened. Cells of the packed (dense) row and
// OpenTSDB's one-column-per-aggregate form are both read; a cell lacking
// one of sum, count, min and max is skipped. Stored rollup cells skip
// the row cache (a packed day row is a few dozen bytes). Their Gets and
// bucket scans run on the Reader's workers as the core's plans do
// (workers.go: one mechanism for every read), each worker's cell buffers
// kept in its pooled rowReader.
//
// # Limits
//
// A Budget counts the series, points and decoded bytes of one query across
// its plans and goroutines (every point of a row read, stored or head,
// as the row is read); the first limit crossed stops the read with a
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
