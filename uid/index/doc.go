// Package index is tsd's series index: every series' TSUID, a dense series
// id, the hours its data may lie in, and roaring bitmaps (postings) from
// metrics, tag keys and tag pairs to series ids, so that a query reads only
// the rows of the series its filters select instead of scanning a whole
// metric. The write path registers series (RegisterSeries, Register,
// Touch); queries resolve filters by bitmap algebra (Postings). It imports
// only uid, storage and internal packages; it never reads the data table
// (`tsd index rebuild` scans it in ingest and calls RegisterMany).
//
// # Meta table rows (family x of tsd-meta, reserved by package uid)
//
//	row                      qualifier  value
//	00 "series_id"           max        8-byte BE counter: highest series id reserved
//	                         seq        8-byte BE counter: highest log sequence reserved
//	                         low        8-byte BE log checkpoint (absent: 1)
//	01 'T' ‖ TSUID           id         4-byte BE series id                 series row
//	                         f          4-byte BE first hour, cell timestamp (2^22 − hour) ms
//	                         l          4-byte BE last hour, cell timestamp (hour + 1) ms
//	01 'L' ‖ seq (8 B BE)    r          change record (below)               log row
//
// A TSUID is metric UID ‖ (tagk UID ‖ tagv UID)*, tags in ascending tagk
// byte order, widths from Options.Widths: the row key without salt and base
// time. Hours are hours since the Unix epoch (a row's base time / 3600).
// OpenTSDB TSMeta rows in a shared meta table are keyed by TSUIDs too and
// may collide with these row keys, but live in family "name": every read,
// write and delete here names family x, and no row range is ever deleted.
//
// Change records (the value of a log row):
//
//	'N' uvarint n, n × (id u32, first u32, last u32, uvarint len, TSUID)   series announced
//	'H' uvarint n, n × (id u32, first u32, last u32)                       spans widened
//	'V' last u64                                                           [seq, last] will never hold a record
//
// An empty span (unknown hours) is first = 0xFFFFFFFF, last = 0.
//
// # Invariants
//
//   - One id per TSUID, whatever the number of daemons: a registration
//     claims the series row with one CheckAndPut expecting no id, which
//     writes the id and the span; the loser adopts the id found there (its
//     own id is skipped) and writes its span there. Every 'N' record
//     follows its series row's claim, so an id names one TSUID.
//   - Ids and sequence numbers come from Increment of the counters, a block
//     (IDBlock, SeqBlock) per call, so they are never reused; a crash or a
//     lost claim skips some. Ids are uint32 (bitmap members); sequence
//     numbers uint64.
//   - A series row is written before its registration returns and before
//     any record mentioning it, so a reload (a scan of the series rows)
//     sees every series whose registration returned, crash or not. A new
//     series costs two synced writes (the claim and its record) plus a
//     counter Increment per IDBlock series. RegisterSeriesBatch (the
//     head's, once per commit) and RegisterMany create their new series
//     together: one Increment for their ids, the claims concurrently, one
//     record per 1024 series.
//   - The family keeps one version per column and a read returns the newest
//     timestamp, so the first-hour cell, stamped (2^22 − hour) ms, keeps the
//     lowest first hour and the last-hour cell, stamped (hour + 1) ms, the
//     highest last hour, whatever order daemons write them in. Spans only
//     widen. first is a lower bound of the data's hours and last an upper
//     bound: Touch moves last LastSlack beyond the hour that extends it, so
//     a series written every hour is persisted once per LastSlack.
//
// # Many daemons: the log and how refresh cannot miss a record
//
// Each daemon keeps the whole index in memory and, every RefreshInterval,
// reads the log rows it has not seen. Sequence numbers are reserved in
// blocks by several daemons, so records land out of order: daemon A may
// write 70 before daemon B writes 5. A reader therefore keeps a cursor (every
// number from it on is unseen) and a set of holes (unseen numbers below it,
// each with the time it was noticed). A refresh scans from the cursor to the
// end, noting skipped numbers as holes, then re-reads the holes (run by run).
// A hole is resolved when its record appears, when a 'V' record covers it (a
// writer gives up the rest of its block at Close and when the block is older
// than HoleTimeout/2), or when the reader voids it after HoleTimeout by
// writing a 'V' with CheckAndPut expecting no record. Writers also write
// records with CheckAndPut expecting no record: a writer that stalled past
// HoleTimeout finds its number voided, gives up its block and writes the
// record under a number of a new block, which every reader will still scan.
// So every record is either read by every reader or re-written where they
// will read it; no clock is compared across daemons (HoleTimeout is
// measured by each reader on its own clock).
//
// A writer also checks the time since its block was reserved, on its own
// clock: a reader notices a hole only after the hole's block was reserved,
// so a record written within HoleTimeout of that cannot have been voided;
// one written later may have been voided and trimmed (its write then
// succeeds unseen), so it is written again under a new number.
//
// Trimming. Once a reader's low water (its lowest unresolved number) is
// 5120 records past the checkpoint "low", it moves the checkpoint to 1024
// below its low water (CheckAndPut from the old value) and deletes the
// family x of the log rows below. Every record below the checkpoint was
// written after its series rows, so the series rows reflect it. A reader
// whose low water is below the checkpoint it reads may have missed trimmed
// records: it resyncs, re-reading every series row, then continues from the
// checkpoint. Loading is the same resync: the checkpoint is read first, then
// the series rows, then the log from the checkpoint; records read twice
// are harmless, since applying a record only adds series and widens spans.
//
// Crashes. After a claim but before its record, the series is loaded by
// every Index opened later but not announced to running ones until a
// registration of its TSUID adopts it (and logs it again) or they resync;
// its registration never returned, so no point of it was acknowledged. A
// span widened by Touch is persisted by the next Flush (within
// RefreshInterval) and lost by a crash before it: the write path's log
// replay touches the replayed hours again.
//
// # Queries
//
// Postings applies filters to the series of a metric by bitmap algebra,
// starting from the positive filter selecting the fewest series. Filters
// match value names, so name matching (wildcards, regular expressions, the
// case-insensitive forms) iterates the distinct values the index holds for
// the tag key and resolves each UID through the Resolver (the UID cache);
// literals are resolved with Lookup. No expansion limit applies: nothing is
// turned into a row-key regular expression. Wildcards anchor as OpenTSDB
// 2.4's TagVWildcardFilter does: "web*" at the start, "*.lga" at the end,
// and "web*lga" or "*web*" at neither; the pieces must occur in order.
// Differences from OpenTSDB 2.4 (docs/opentsdb.md, Queries): iwildcard
// lower-cases the value as well as the pattern (OpenTSDB's forgets the
// value, though it documents the filter as case-insensitive), the pieces
// may not overlap (OpenTSDB advances its search by each piece's length, not
// past the match), and regexp uses Go's RE2 syntax where OpenTSDB uses
// java.util.regex. PromQL matchers are anchored
// RE2, and a value "" matches series without the label, as in Prometheus.
// A PromQL expression that can only match a few names (literals,
// alternations, concatenations and small character classes, as Grafana
// writes a multi-value variable: host=~"(web1|web2)") is turned into those
// names and looked up (setmatch.go), as Prometheus's own set matches do;
// anything else runs over the tag's values.
//
// Postings keeps its answers (selcache.go), keyed by the metric and the
// filters, with the index's generation when the answer was found: every
// series added, here or by a refresh, and every DropCaches moves the
// generation, and an answer found at another generation is found again.
// Nothing else changes what Postings answers: series are never removed
// and their ids never reused.
//
// # Concurrency
//
// The TSUID map is split in 64 padded shards under read-write locks: a
// registration of a known series is one read-locked map lookup with no
// allocation, and Touch of a covered hour adds two atomic loads. Postings,
// the id table and the per-key value lists are under one read-write lock:
// queries hold it for the bitmap algebra only (name resolution happens
// before, on an append-only snapshot of the value list), and a new series
// holds it to add itself to every posting at once, so queries see a series
// in all its postings or in none. Refreshes run one at a time. Registrations
// of one TSUID in one process (RegisterSeries, Register and
// RegisterSeriesBatch) share one creation.
package index
