package main

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/storage/bigtable"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index/lookup"
)

// wireMeta fills the metadata fields of opts: the lookup service over the
// write path's UIDs and index, the /api/config snapshot, and the stats of
// /api/stats and /metrics (opts.Query and opts.PromQL must be set already:
// the query reader, shared by every query API, has the counters listed, and
// PromQL's label cache is dropped with the UID caches and on renames);
// srv gives the listener's connection and answer counters once it exists.
func (c *config) wireMeta(opts *api.Options, st *ingestStack, srv *serverRef) {
	var names []lookup.NameCache
	if nc, ok := opts.PromQL.Queryable.(lookup.NameCache); ok {
		names = append(names, nc) // PromQL's label sets, by TSUID
	}
	if opts.Query != nil && opts.Query.Options().Reader != nil {
		// The decoded-row cache holds no names, but /api/dropcaches is
		// the operator's one switch for every cache, as in OpenTSDB.
		names = append(names, rowCacheDropper{opts.Query.Options().Reader})
	}
	if opts.Changes != nil {
		// A rename changes the labels of kept PromQL answers; dropcaches
		// is the operator's switch for every cache.
		names = append(names, changesDropper{opts.Changes})
	}
	svc, err := lookup.New(lookup.Options{UIDs: st.uids, Index: st.index, NameCaches: names, TSMeta: st.tsmeta})
	if err == nil { // both are always open here; without them the endpoints answer 501
		opts.Meta = svc
	}
	opts.Config = c.snapshot()
	q := opts.Query
	authn := opts.Auth
	pq, _ := opts.PromQL.Queryable.(*promql.Queryable)
	opts.Stats = func() []api.Stat {
		l := statList(collectStats(st, q, srv.Load()))
		l.authStats(authn)
		l.promRollupStats(pq)
		l.promCacheStats(opts.PromQL.Cache)
		return l
	}
	st.stats = opts.Stats // telnet's stats: the same list
}

// promRollupStats lists the PromQL Selects answered from rollup cells,
// by the table that served them, and the windows they read raw.
func (l *statList) promRollupStats(q *promql.Queryable) {
	if q == nil {
		return
	}
	s := q.Stats()
	for _, t := range slices.Sorted(maps.Keys(s.RollupTables)) {
		l.add("tsd.promql.rollup.selects", "PromQL selectors answered from rollup cells, by table.", true, s.RollupTables[t],
			api.StatTag{Key: "table", Value: t})
	}
	l.add("tsd.promql.rollup.raw-windows", "Windows of PromQL rollup answers read from raw points (a min or max whose extreme may leave the window, a partial cell).",
		true, s.RollupRawWindows)
}

// promCacheStats lists the PromQL answer cache's counters.
func (l *statList) promCacheStats(c *promapi.AnswerCache) {
	if c == nil {
		return
	}
	s := c.Stats()
	l.add("tsd.promql.cache.hits", "PromQL range queries answered from the answer cache.", true, s.Hits)
	l.add("tsd.promql.cache.misses", "PromQL range queries the answer cache could have kept but did not hold (or held stale) and ran.", true, s.Misses)
	l.add("tsd.promql.cache.entries", "Answers the PromQL answer cache holds.", false, int64(s.Entries))
	l.add("tsd.promql.cache.bytes", "Bytes the PromQL answer cache holds.", false, s.Bytes)
}

// rowCacheDropper empties the query reader's row cache with the others.
type rowCacheDropper struct{ r *read.Reader }

// DropCaches implements lookup.NameCache.
func (d rowCacheDropper) DropCaches() { d.r.DropCache() }

// changesDropper makes every kept PromQL answer stale with the caches.
type changesDropper struct{ c *changes.Tracker }

// DropCaches implements lookup.NameCache.
func (d changesDropper) DropCaches() { d.c.MarkAll() }

// snapshot returns every key's current value as text.
func (c *config) snapshot() map[string]string {
	m := make(map[string]string, len(c.keys))
	for _, k := range c.keys {
		if k.get != nil { // every key made by newKey has one
			m[k.name] = k.get()
		}
	}
	return m
}

// statList accumulates stats.
type statList []api.Stat

func (l *statList) add(name, help string, counter bool, v int64, tags ...api.StatTag) {
	*l = append(*l, api.Stat{Name: name, Help: help, Counter: counter, Value: float64(v), Tags: tags})
}

// collectStats reads every component's counters, names in OpenTSDB's
// tsd.* style (tsd.uid.cache-hit with kind=metrics|tagk|tagv, as OpenTSDB).
func collectStats(st *ingestStack, q *opentsdb.Engine, srv *api.Server) []api.Stat {
	var l statList
	l.connStats(srv)
	l.rpcStats(st, srv)
	l.answerStats(srv)
	l.uidStats(st.uids)
	l.indexStats(st)
	l.treeStats(&st.trees)
	if st.head != nil {
		l.add("tsd.head.series", "Series in the in-memory head.", false, st.head.NumSeries())
		l.add("tsd.head.memory-bytes", "Bytes held by the head's unflushed points.", false, st.head.MemoryBytes())
		l.seriesLimitStats(st.head.SeriesLimitStats())
		rs := st.head.ReplayStats()
		l.add("tsd.wal.corrupt-records", "Damaged write-ahead log records skipped at start-up replay.", true, rs.WAL.CorruptRecords)
		l.add("tsd.wal.corrupt-bytes", "Bytes of the damaged write-ahead log records skipped at start-up replay.", true, rs.WAL.CorruptBytes)
		l.add("tsd.wal.dropped-points", "Intact logged points dropped at start-up replay: their series record was damaged.", true, rs.OrphanSamples)
	}
	l.writerStats(st.writer)
	if st.writer != nil {
		l.add("tsd.histograms.stored", "Histogram points stored through /api/histogram and telnet histogram.", true, st.writer.HistogramsStored())
	}
	l.flushStats(st)
	l.diskStats(st)
	if p, ok := st.db.(*pebble.DB); ok {
		l.add("tsd.storage.damaged-sstables", "Damaged sstables the store has found since start; reads of their key ranges fail and writes there are refused until tsd repair.",
			true, int64(len(p.DamagedFiles())))
		var blocks int64
		salvaged := p.SalvagedLogs()
		for _, s := range salvaged {
			blocks += int64(len(s.Damaged))
		}
		l.add("tsd.storage.salvaged-logs", "Damaged logs of the store (pebble's own) rewritten at open without their damaged records; each original is kept beside it as .damaged.",
			true, int64(len(salvaged)))
		l.add("tsd.storage.restored-manifests", "Damaged MANIFESTs of the store mended at open from their copy (TSD-MANIFEST-*); each original is kept beside it as .damaged.",
			true, p.RestoredManifests())
		l.add("tsd.storage.log-damaged-blocks", "32 KiB blocks of the store's own log where salvaging met damage; the records broken there are lost.",
			true, blocks)
		l.pebbleStats(p)
	}
	if b, ok := st.db.(*bigtable.DB); ok {
		r := b.RPCStats()
		// Their latency is tsd_bigtable_request_duration_seconds (store_metrics.go).
		l.add("tsd.bigtable.errors", "Bigtable RPC attempts that failed.", true, r.Errors)
	}
	if q != nil && q.Options().Reader != nil {
		r := q.Options().Reader.Stats()
		l.add("tsd.query.storage.gets", "Row gets the query reader issued.", true, r.Gets)
		l.add("tsd.query.storage.scans", "Scans the query reader issued.", true, r.Scans)
		l.add("tsd.query.storage.rows", "Data rows the query reader decoded.", true, r.Rows)
		l.add("tsd.query.storage.corrupt-cells", "Cells the query reader could not decode.", true, r.CorruptCells)
		l.add("tsd.query.plans", "Read plans chosen, by plan.", true, r.PlansSeries, api.StatTag{Key: "plan", Value: "series"})
		l.add("tsd.query.plans", "Read plans chosen, by plan.", true, r.PlansScan, api.StatTag{Key: "plan", Value: "scan"})
		l.add("tsd.query.rowcache.hits", "Rows the query reader found decoded in its row cache.", true, r.CacheHits)
		l.add("tsd.query.rowcache.misses", "Rows the query reader looked up in its row cache and decoded.", true, r.CacheMisses)
		l.add("tsd.query.rowcache.bytes", "Bytes the query reader's row cache holds.", false, r.CacheBytes)
		l.add("tsd.query.rowcache.trusted", "Stored rows answered from the row cache without a read, their hour unwritten since they were read.", true, r.Trusted)
		l.add("tsd.query.rowcache.recorded", "Rows answered from a series' record of its last read, one lookup for the series instead of one a row.", true, r.Recorded)
		l.add("tsd.query.rowcache.moved", "Head rows in the row cache kept as the stored rows a flush wrote from them.", true, r.Moved)
		l.add("tsd.query.rowcache.rows", "Rows the query reader's row cache holds.", false, r.CacheRows)
		l.add("tsd.query.rowcache.reserve", "Bytes kept resident for the row cache's new entries (tsd.query.row_cache.reserve), ready now.", false, r.CacheReserve)
	}
	return l
}

// rpcStats lists OpenTSDB's rpc.received, rpc.errors, http.latency_*
// and datapoints.added figures.
func (l *statList) rpcStats(st *ingestStack, srv *api.Server) {
	if st.telnet != nil {
		l.add("tsd.rpc.received", "Requests received, by type: telnet commands, HTTP requests, data points sent to /api/put.", true,
			st.telnet.Commands(), api.StatTag{Key: "type", Value: "telnet"})
	}
	if srv != nil {
		h := srv.HTTPStats()
		l.add("tsd.rpc.received", "Requests received, by type: telnet commands, HTTP requests, data points sent to /api/put.", true,
			h.Requests, api.StatTag{Key: "type", Value: "http"})
		for _, p := range []struct {
			name string
			v    int64
		}{{"tsd.http.latency_50pct", h.P50}, {"tsd.http.latency_75pct", h.P75}, {"tsd.http.latency_90pct", h.P90}, {"tsd.http.latency_95pct", h.P95}} {
			l.add(p.name, "Milliseconds HTTP requests took to answer, percentile since start (the upper bound of a bucket a quarter of a power of two wide).",
				false, p.v, api.StatTag{Key: "type", Value: "all"})
		}
	}
	if st.writer == nil {
		return
	}
	put := st.writer.Stats(service.Put)
	l.add("tsd.rpc.received", "Requests received, by type: telnet commands, HTTP requests, data points sent to /api/put.", true,
		put.Points.Load()+put.Bad.Load()+put.Throttled.Load(), api.StatTag{Key: "type", Value: "put"})
	var added, bad, invalid, unknown, blocked, store int64
	for _, p := range []service.Protocol{service.Telnet, service.Put, service.Influx, service.RemoteWrite} {
		c := st.writer.Stats(p)
		added, bad = added+c.Points.Load(), bad+c.Bad.Load()
		invalid, unknown = invalid+c.InvalidValues.Load(), unknown+c.UnknownNames.Load()
		blocked, store = blocked+c.Blocked.Load(), store+c.StoreErrors.Load()
	}
	// OpenTSDB's PutDataPointRpc types; illegal_arguments is every other
	// bad point.
	const rpcErrorsHelp = "Data points refused, every protocol, by type: invalid_values (not a number), unknown_metrics (an unknown name with auto-creation off), illegal_arguments (any other bad data), socket_writes_blocked (the head over its memory limit), hbase_errors (the log or the store failed)."
	for _, e := range []struct {
		typ string
		n   int64
	}{{"illegal_arguments", bad - invalid - unknown}, {"invalid_values", invalid}, {"unknown_metrics", unknown},
		{"socket_writes_blocked", blocked}, {"hbase_errors", store}} {
		l.add("tsd.rpc.errors", rpcErrorsHelp, true, e.n, api.StatTag{Key: "type", Value: e.typ})
	}
	l.add("tsd.datapoints.added", "Data points stored, every protocol.", true, added, api.StatTag{Key: "type", Value: "all"})
}

// maxIDsTimeout bounds the stats' read of the UID MAXID row.
const maxIDsTimeout = time.Second

func (l *statList) uidStats(u *uid.UIDs) {
	if u == nil {
		return
	}
	// The MAXID row is the only figure read from the store: bounded, so
	// that /api/stats, telnet stats and /metrics answer while the store
	// does not (a Bigtable client retries an unavailable store for
	// minutes); the two figures are left out then.
	ctx, cancel := context.WithTimeout(context.Background(), maxIDsTimeout)
	defer cancel()
	if ids, err := u.MaxIDs(ctx); err == nil {
		for _, k := range uid.Kinds {
			tag := api.StatTag{Key: "kind", Value: k.String()}
			l.add("tsd.uid.ids-used", "UIDs assigned, by kind (the MAXID counter).", false, int64(ids[k]), tag)
			l.add("tsd.uid.ids-available", "UIDs left to assign, by kind: the width's largest UID less those used.", false,
				int64(uid.MaxIDForWidth(u.Width(k))-ids[k]), tag)
		}
	}
	all := u.Stats()
	for _, k := range uid.Kinds {
		s, tag := all[k], api.StatTag{Key: "kind", Value: k.String()}
		l.add("tsd.uid.cache-hit", "UID cache hits, both directions.", true, int64(s.Names.Hits+s.IDs.Hits), tag)
		l.add("tsd.uid.cache-miss", "UID cache misses, both directions.", true, int64(s.Names.Misses+s.IDs.Misses), tag)
		l.add("tsd.uid.cache-size", "Entries in the UID caches.", false, int64(s.Names.Entries+s.IDs.Entries), tag)
		l.add("tsd.uid.cache-evictions", "Entries evicted from the UID caches.", true, int64(s.Names.Evictions+s.IDs.Evictions), tag)
		l.add("tsd.uid.assigned", "UIDs this process assigned.", true, int64(s.Assigned), tag)
		l.add("tsd.uid.races-lost", "Assignments another writer won.", true, int64(s.RacesLost), tag)
	}
}

func (l *statList) indexStats(st *ingestStack) {
	if st.index == nil {
		return
	}
	s := st.index.Stats()
	l.add("tsd.index.series", "Series in the series index.", false, int64(s.Series))
	for _, c := range []struct {
		name, help string
		v          uint64
	}{
		{"tsd.index.created", "Series this daemon registered first.", s.Created},
		{"tsd.index.adopted", "Registrations that found the series already registered.", s.Adopted},
		{"tsd.index.learned", "Series learned from the store by refreshes and loads.", s.Learned},
		{"tsd.index.refreshes", "Index refreshes.", s.Refreshes},
		{"tsd.index.resyncs", "Full index rescans after a trimmed log.", s.Resyncs},
		{"tsd.index.corrupt", "Index rows and records skipped as corrupt.", s.Corrupt},
	} {
		l.add(c.name, c.help, true, int64(c.v))
	}
}

func (l *statList) writerStats(w *service.Writer) {
	if w == nil {
		return
	}
	for _, p := range []service.Protocol{service.Telnet, service.Put, service.Influx, service.RemoteWrite} {
		c, tag := w.Stats(p), api.StatTag{Key: "protocol", Value: p.String()}
		l.add("tsd.ingest.points", "Points stored, by protocol.", true, c.Points.Load(), tag)
		l.add("tsd.ingest.bad", "Points refused as bad data, by protocol.", true, c.Bad.Load(), tag)
		l.add("tsd.ingest.throttled", "Points refused for overload, by protocol.", true, c.Throttled.Load(), tag)
		l.add("tsd.ingest.read-only", "Points refused because the daemon was read-only (a full disk), by protocol; also in throttled.", true, c.ReadOnly.Load(), tag)
		l.add("tsd.ingest.too-large", "Requests (telnet: lines) refused for their size, by protocol.", true, c.TooLarge.Load(), tag)
	}
}

// seriesLimitStats lists the points each series limit refused, by its
// key, and the series each sliding window counts.
func (l *statList) seriesLimitStats(s head.SeriesLimitStats) {
	for _, c := range []struct {
		limit string
		n     int64
	}{{head.LimitHourlySeries, s.RefusedHourly}, {head.LimitDailySeries, s.RefusedDaily},
		{head.LimitSeriesPerMetric, s.RefusedPerMetric}} {
		l.add("tsd.ingest.series-limit.refused", "Points refused by a series limit, by the limit's key.", true, c.n,
			api.StatTag{Key: "limit", Value: c.limit})
	}
	l.add("tsd.ingest.series-limit.series", "Distinct series written in each series limit's sliding window (0 when off).",
		false, s.Hourly, api.StatTag{Key: "window", Value: "hour"})
	l.add("tsd.ingest.series-limit.series", "Distinct series written in each series limit's sliding window (0 when off).",
		false, s.Daily, api.StatTag{Key: "window", Value: "day"})
}

func (l *statList) flushStats(st *ingestStack) {
	if st.head != nil && st.flusher != nil {
		base, ok := st.head.OldestHour()
		l.addFloat("tsd.flush.lag-seconds", "Seconds since the hour of the oldest row still in memory ended (0 when none has); an hour's rollup cells are written when its rows flush, so this is the rollup lag too.",
			false, lagSeconds(base, ok))
	}
	if st.flusher != nil {
		f := st.flusher.Stats()
		l.add("tsd.flush.rows", "Rows written from the head to the store.", true, f.Rows)
		l.add("tsd.flush.points", "Points written from the head to the store.", true, f.Points)
		l.add("tsd.flush.examined", "Open rows flush rounds looked at, due or not (a round that knows none is due yet looks at none).", true, f.Examined)
		l.add("tsd.meta.tracked-rows", "Flushed rows whose series' TSMeta counters were updated (tsd.core.meta tracking).", true, f.Tracked)
		l.add("tsd.meta.track-errors", "Flushed batches whose TSMeta counters could not be updated.", true, f.TrackErrors)
		r := st.flusher.RollupStats()
		l.add("tsd.rollup.rows", "Rollup rows rewritten from raw rows at flush and compaction.", true, r.Rows)
		l.add("tsd.rollup.cells", "Rollup cells computed from raw rows at flush and compaction.", true, r.Cells)
		l.add("tsd.rollup.source-reads", "Raw rows read back to compute their rollup cells (rows that may hold other columns).", true, r.SourceReads)
		l.add("tsd.rollup.conflicts", "Packed rollup rows another writer changed between read and write (retried).", true, r.Conflicts)
	}
	if st.compactor != nil {
		c := st.compactor.Stats()
		l.add("tsd.compaction.count", "Rows compacted into one column.", true, c.Compacted)
		l.add("tsd.compaction.duplicates", "Points compacted rows held twice, by type: identical (same value) or variant (another value; the newest column's kept).", true, c.Identical, api.StatTag{Key: "type", Value: "identical"})
		l.add("tsd.compaction.duplicates", "Points compacted rows held twice, by type: identical (same value) or variant (another value; the newest column's kept).", true, c.Variant, api.StatTag{Key: "type", Value: "variant"})
		l.add("tsd.compaction.queue.size", "Rows in the compaction queue when it was last read.", false, c.Queued)
		l.add("tsd.compaction.errors", "Queued rows whose compaction failed in the store (they stay queued).", true, c.Errors)
		l.add("tsd.compaction.points", "Points written by compactions.", true, c.Points)
		l.add("tsd.compaction.bad-cells", "Cells compaction could not decode.", true, c.BadCells)
		l.addFloat("tsd.compaction.lag-seconds", "Seconds since the hour of the oldest row the last compaction round found queued ended (0 with none queued); rows wait the flush grace, then a round.",
			false, lagSeconds(c.OldestMs, c.OldestMs != 0))
	}
}

// answerStats lists the API server's query admission and answer
// counters (nil before the server exists).
func (l *statList) answerStats(srv *api.Server) {
	if srv == nil {
		return
	}
	a := srv.AnswerStats()
	l.add("tsd.query.running", "Queries holding one of the tsd.query.max_concurrent slots.", false, a.Running)
	l.add("tsd.query.waiting", "Queries waiting for a slot.", false, a.Waiting)
	l.add("tsd.query.admitted", "Queries, OpenTSDB's and PromQL's, that took a slot.", true, a.Admitted)
	l.add("tsd.query.queued", "Queries that waited in the queue for a slot.", true, a.Queued)
	l.add("tsd.query.refused", "Queries answered 503 because the queue (tsd.query.max_queued) was full.", true, a.Refused)
	l.add("tsd.query.output-limit", "OpenTSDB answers over tsd.query.limits.output_points, by when: refused 413 before their first byte, or cut short while streaming.", true, a.OutputRefused, api.StatTag{Key: "when", Value: "refused"})
	l.add("tsd.query.output-limit", "OpenTSDB answers over tsd.query.limits.output_points, by when: refused 413 before their first byte, or cut short while streaming.", true, a.OutputAborted, api.StatTag{Key: "when", Value: "aborted"})
	l.add("tsd.query.answers-cut", "Streamed answers cut short by a failure other than the output limit (a timeout, the store, shutdown).", true, a.Cut)
	l.add("tsd.connection.write-timeouts", "Connections, HTTP or telnet, closed because the client did not take a reply within tsd.network.write_timeout at tsd.network.write_min_rate.", true, a.WriteTimeouts)
}

// pebbleStats lists the embedded engine's own figures: compaction debt,
// L0's shape, write stalls and disk usage, in all and by table.
func (l *statList) pebbleStats(p *pebble.DB) {
	if m := p.Metrics(); m != nil {
		l.add("tsd.pebble.compaction.debt-bytes", "Bytes pebble estimates it must compact for the LSM to reach a stable shape.", false, int64(m.Compact.EstimatedDebt))
		l.add("tsd.pebble.compactions", "Compactions pebble has run since start.", true, m.Compact.Count)
		l.add("tsd.pebble.compactions.in-progress", "Compactions pebble is running.", false, m.Compact.NumInProgress)
		l.add("tsd.pebble.l0.files", "Sstables in level 0; many mean flushes outrun compactions.", false, m.Levels[0].TablesCount)
		l.add("tsd.pebble.l0.sublevels", "Sublevels of level 0, the read amplification there; pebble stalls writes at 20 by default.", false, int64(m.Levels[0].Sublevels))
		l.add("tsd.pebble.disk-bytes", "Bytes the pebble store holds on disk (sstables, logs, manifests).", false, int64(m.DiskSpaceUsage()))
	}
	// Ended stalls are tsd_pebble_write_stall_duration_seconds (store_metrics.go).
	l.addFloat("tsd.pebble.write-stalled-seconds", "Seconds the write stall going on has lasted (0 when writes flow); a stall is counted in tsd_pebble_write_stall_duration_seconds when it ends.", false, p.Stalled().Seconds())
	for _, u := range p.DiskUsageByTable() {
		l.add("tsd.pebble.table-bytes", "Bytes on disk estimated per table (the sstables overlapping its keys, prorated).", false, int64(u.Bytes),
			api.StatTag{Key: "table", Value: u.Table})
	}
}

func (l *statList) addFloat(name, help string, counter bool, v float64, tags ...api.StatTag) {
	*l = append(*l, api.Stat{Name: name, Help: help, Counter: counter, Value: v, Tags: tags})
}

// lagSeconds is how long ago the hour starting at base (ms) ended, 0
// when there is none or it has not ended.
func lagSeconds(base int64, ok bool) float64 {
	if !ok {
		return 0
	}
	return max(0, float64(time.Now().UnixMilli()-base-head.RowSpan)/1000)
}
