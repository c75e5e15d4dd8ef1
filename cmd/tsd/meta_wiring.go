package main

import (
	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/query/meta"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// wireMeta fills the metadata fields of opts: the lookup service over the
// write path's UIDs and index, the /api/config snapshot, and the stats of
// /api/stats and /metrics (opts.Query and opts.PromQL must be set already:
// the query reader, shared by every query API, has the counters listed, and
// PromQL's label cache is dropped with the UID caches and on renames);
// srv gives the listener's connection and answer counters once it exists.
func (c *config) wireMeta(opts *api.Options, st *ingestStack, srv *serverRef) {
	var names []meta.NameCache
	if nc, ok := opts.PromQL.Queryable.(meta.NameCache); ok {
		names = append(names, nc) // PromQL's label sets, by TSUID
	}
	if opts.Query != nil && opts.Query.Options().Reader != nil {
		// The decoded-row cache holds no names, but /api/dropcaches is
		// the operator's one switch for every cache, as in OpenTSDB.
		names = append(names, rowCacheDropper{opts.Query.Options().Reader})
	}
	svc, err := meta.New(meta.Options{UIDs: st.uids, Index: st.index, NameCaches: names})
	if err == nil { // both are always open here; without them the endpoints answer 501
		opts.Meta = svc
	}
	opts.Config = c.snapshot()
	q := opts.Query
	opts.Stats = func() []api.Stat { return collectStats(st, q, srv.Load()) }
}

// rowCacheDropper empties the query reader's row cache with the others.
type rowCacheDropper struct{ r *read.Reader }

// DropCaches implements meta.NameCache.
func (d rowCacheDropper) DropCaches() { d.r.DropCache() }

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
	l.answerStats(srv)
	l.uidStats(st.uids)
	l.indexStats(st)
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
	l.flushStats(st)
	l.diskStats(st)
	if p, ok := st.db.(*pebble.DB); ok {
		l.add("tsd.storage.damaged-sstables", "Damaged sstables the store has found since start; reads of their key ranges fail and writes there are refused until tsd repair.",
			true, int64(len(p.DamagedFiles())))
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
		l.add("tsd.query.rowcache.rows", "Rows the query reader's row cache holds.", false, r.CacheRows)
	}
	return l
}

func (l *statList) uidStats(u *uid.UIDs) {
	if u == nil {
		return
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
func (l *statList) seriesLimitStats(s ingest.SeriesLimitStats) {
	for _, c := range []struct {
		limit string
		n     int64
	}{{ingest.LimitHourlySeries, s.RefusedHourly}, {ingest.LimitDailySeries, s.RefusedDaily},
		{ingest.LimitSeriesPerMetric, s.RefusedPerMetric}} {
		l.add("tsd.ingest.series-limit.refused", "Points refused by a series limit, by the limit's key.", true, c.n,
			api.StatTag{Key: "limit", Value: c.limit})
	}
	l.add("tsd.ingest.series-limit.series", "Distinct series written in each series limit's sliding window (0 when off).",
		false, s.Hourly, api.StatTag{Key: "window", Value: "hour"})
	l.add("tsd.ingest.series-limit.series", "Distinct series written in each series limit's sliding window (0 when off).",
		false, s.Daily, api.StatTag{Key: "window", Value: "day"})
}

func (l *statList) flushStats(st *ingestStack) {
	if st.flusher != nil {
		f := st.flusher.Stats()
		l.add("tsd.flush.rows", "Rows written from the head to the store.", true, f.Rows)
		l.add("tsd.flush.points", "Points written from the head to the store.", true, f.Points)
	}
	if st.compactor != nil {
		c := st.compactor.Stats()
		l.add("tsd.compaction.count", "Rows compacted into one column.", true, c.Compacted)
		l.add("tsd.compaction.points", "Points written by compactions.", true, c.Points)
		l.add("tsd.compaction.bad-cells", "Cells compaction could not decode.", true, c.BadCells)
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
	l.add("tsd.connection.write-timeouts", "Connections, HTTP or telnet, closed because the client took no byte of a reply within tsd.network.write_timeout.", true, a.WriteTimeouts)
}
