package main

import (
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/api/admit"
	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid/tree"
)

// config is every setting tsd reads at start, typed and validated. The key
// table in keys fills it; wiring.go turns it into other packages' options.
type config struct {
	port    int
	bind    string
	engine  string
	dataDir string
	// settings are recorded with the store and cannot change once data
	// exists (format, salt, UID widths); schema.EnsureRecord checks them.
	settings          schema.Settings
	autoCreateMetrics bool
	maxTags           int
	dataTable         string
	uidTable          string
	metaTable         string
	trees             treeConfig // tsd.storage.hbase.tree_table, tsd.core.tree.*
	noDieDieDie       bool
	allowSpecialChars string
	bigtableProject   string
	bigtableInstance  string
	bigtableCreate    bool
	ingest            ingestConfig
	network           networkConfig
	// fds shares the open-file limit between the store and clients;
	// serve sets it from the limit before it opens the store.
	fds          fdPlan
	query        queryConfig
	disk         diskConfig
	rollups      rollupConfig
	histograms   string        // tsd.core.histograms.config as given
	writeTimeout time.Duration // tsd.network.write_timeout; 0 none
	writeMinRate int           // tsd.network.write_min_rate, bytes/s
	auth         authConfig    // tsd.auth.*
	access       accessConfig  // browser safety and tsd.mode
	obs          obsConfig     // logs, access log, self-scrape
	// bigtableEmulator is BIGTABLE_EMULATOR_HOST, read by main; not a key.
	bigtableEmulator string
	// fs is the file system of the data directory: nil for the operating
	// system's. No key or flag sets it; the in-process tests set a
	// simulated disk (storage/pebble/diskfull) to fill it up.
	fs vfs.FS

	keys   []*key          // in --help order
	byName map[string]*key // by name and by alias
}

// keyTable lists every setting tsd knows, in --help order. To add one, add a
// field above (or bind straight into an options struct) and one line here;
// only add keys whose feature exists.
func (c *config) keyTable() []*key {
	s, def := &c.settings, schema.DefaultSettings()
	return append([]*key{
		intKey(&c.port, "tsd.network.port", 4242, 0, 65535, "TCP port for telnet and HTTP; 0 picks a free port").withAlias("port"),
		stringKey(&c.bind, "tsd.network.bind", "0.0.0.0", "IP address to listen on"),
		durationKey(&c.network.readHeaderTimeout, "tsd.network.read_header_timeout", 30*time.Second, "time a new connection has to send its first request (HTTP request line and headers, or a telnet line), and each later HTTP request from its first byte to its headers' end; 0 none"),
		intKey(&c.network.socketTimeout, "tsd.core.socket.timeout", 300, 0, math.MaxInt32, "seconds a connection, HTTP or telnet, may wait outside a request head without sending a byte before it is closed; 0 never (OpenTSDB's default)"),
		intKey(&c.network.connLimit, "tsd.core.connections.limit", 10000, 0, math.MaxInt32, "most open client connections, lowered at start to the open-file limit less what the store keeps; past it a new connection is closed at once; 0 only the open-file limit"),
		stringKey(&c.network.tls.CertFile, "tsd.network.tls.cert_file", "", "PEM certificate (chain) served to TLS clients on the port; with key_file, turns TLS on beside plaintext"),
		stringKey(&c.network.tls.KeyFile, "tsd.network.tls.key_file", "", "PEM private key of tsd.network.tls.cert_file"),
		stringKey(&c.network.tls.ClientCAFile, "tsd.network.tls.client_ca_file", "", "PEM CA bundle; when set, every TLS client must present a certificate it verifies"),
		boolKey(&c.network.tls.Required, "tsd.network.tls.required", false, "refuse plaintext: HTTP is answered 400, telnet gets one error line and is closed"),
		durationKey(&c.network.tlsReload, "tsd.network.tls.reload_interval", api.DefaultTLSReloadInterval, "how often the TLS files are read again, new contents serving new handshakes (SIGHUP reloads at once); 0 only on SIGHUP"),
		enumKey(&c.engine, "tsd.storage.engine", "pebble", []string{"pebble", "bigtable"}, "storage engine: embedded pebble, or Cloud Bigtable"),
		stringKey(&c.dataDir, "tsd.storage.directory", "./data", "data directory of the pebble engine").withAlias("data"),
		newKey(&s.Format, "tsd.storage.format", def.Format, "dense|opentsdb", schema.ParseFormat, schema.Format.String, "format of a new store: dense (tsd's) or opentsdb (shared with OpenTSDB 2.4); fixed once data exists"),
		intKey(&s.SaltWidth, "tsd.storage.salt.width", def.SaltWidth, 0, salt.MaxWidth, "salt bytes in front of each row key, 0 = no salt; fixed once data exists"),
		intKey(&s.SaltBuckets, "tsd.storage.salt.buckets", def.SaltBuckets, 1, math.MaxInt32, "number of salt buckets; fixed once data exists"),
		intKey(&s.Widths.Metric, "tsd.storage.uid.width.metric", def.Widths.Metric, 1, 8, "bytes of a metric UID; fixed once data exists"),
		intKey(&s.Widths.TagK, "tsd.storage.uid.width.tagk", def.Widths.TagK, 1, 8, "bytes of a tag key UID; fixed once data exists"),
		intKey(&s.Widths.TagV, "tsd.storage.uid.width.tagv", def.Widths.TagV, 1, 8, "bytes of a tag value UID; fixed once data exists"),
		boolKey(&c.autoCreateMetrics, "tsd.core.auto_create_metrics", true, "assign UIDs to new metrics (false refuses points of unknown metrics)"),
		intKey(&c.maxTags, "tsd.storage.max_tags", 32, 1, 1024, "most tags a point may have"),
		stringKey(&c.allowSpecialChars, "tsd.core.tag.allow_specialchars", "", "extra characters allowed in names on the telnet and /api/put paths"),
		stringKey(&c.dataTable, "tsd.storage.hbase.data_table", schema.DefaultDataTable, "name of the data point table"),
		stringKey(&c.uidTable, "tsd.storage.hbase.uid_table", schema.DefaultUIDTable, "name of the UID table"),
		stringKey(&c.metaTable, "tsd.storage.hbase.meta_table", schema.DefaultMetaTable, "name of the meta table (settings record, series index)"),
		stringKey(&c.trees.table, "tsd.storage.hbase.tree_table", tree.DefaultTable, "name of the tree table (OpenTSDB's trees: definitions, rules, branches, leaves)"),
		boolKey(&c.trees.processing, "tsd.core.tree.enable_processing", false, "file each new series in every enabled tree (off the write path, from a bounded queue; tsd tree sync files existing ones)"),
		boolKey(&c.noDieDieDie, "tsd.no_diediedie", true, "refuse the telnet diediedie shutdown command"),
		stringKey(&c.auth.file, "tsd.auth.config", "", "users file (YAML: users with name, password_bcrypt or token_sha256, role read|write|admin); when set every route and telnet command needs a user whose role covers it; reloaded when it changes and on SIGHUP; empty: no access control"),
		stringKey(&c.auth.openPaths, "tsd.auth.open_paths", "", "comma list of exact paths served without credentials while tsd.auth.config is set, such as /metrics,/api/version"),
		enumKey(&c.auth.telnetRole, "tsd.auth.telnet_role", "none", []string{"none", "read", "write", "admin"}, "role of telnet connections that do not authenticate (collectors that cannot, such as tcollector) while tsd.auth.config is set"),
		boolKey(&c.ingest.autoCreateTagK, "tsd.core.auto_create_tagks", true, "assign UIDs to new tag keys (false refuses points with unknown tag keys)"),
		boolKey(&c.ingest.autoCreateTagV, "tsd.core.auto_create_tagvs", true, "assign UIDs to new tag values (false refuses points with unknown tag values)"),
		boolKey(&c.ingest.realtimeTS, "tsd.core.meta.enable_realtime_ts", false, "keep each series' TSMeta created time, latest arrival and point count (as enable_tsuid_incrementing), updated per flushed row"),
		boolKey(&c.ingest.tsuidTracking, "tsd.core.meta.enable_tsuid_tracking", false, "keep each series' latest arrival in its TSMeta (totalDatapoints reads 1), updated per flushed row"),
		boolKey(&c.ingest.realtimeUID, "tsd.core.meta.enable_realtime_uid", false, "report a UIDMeta's created time, when none is stored, as when its UID was assigned (or last renamed)"),
		boolKey(&c.ingest.tsuidIncrementing, "tsd.core.meta.enable_tsuid_incrementing", false, "keep each series' latest arrival, point count and created time in its TSMeta, updated per flushed row"),
		durationKey(&c.ingest.fsyncInterval, "tsd.storage.wal.fsync_interval", time.Second, "how often the write-ahead log is synced to disk (a sync put syncs at once)"),
		durationKey(&c.ingest.flushGrace, "tsd.storage.flush.grace", 10*time.Minute, "how long after its hour a row waits without new points before it is written to the store"),
		bytesKey(&c.ingest.headMaxMemory, "tsd.storage.head.max_memory", 2<<30, "memory of unflushed points above which rows are flushed early and writes throttled; -1 unlimited"),
		bytesKey(&c.disk.minFree, "tsd.storage.min_free_bytes", pebble.DefaultMinFreeBytes, "free disk space the pebble engine keeps; with less, writes are refused (503, telnet's throttle line) and reads go on until space is back; 0 or -1 off"),
		positiveDurationKey(&c.disk.checkInterval, "tsd.storage.free_check_interval", pebble.DefaultFreeCheckInterval, "how often the pebble engine reads the free disk space"),
		newKey(&c.ingest.retention, "tsd.storage.retention", "", "rules", checkRetention, func(s string) string { return s }, "per-metric retention, glob:duration rules, first match wins (tmp.*:1d,*:forever); empty keeps everything"),
		intKey(&c.ingest.seriesLimits.MaxHourly, "tsd.core.max_hourly_series", 0, 0, 1<<30, "distinct series that may be written in a sliding hour (a series counts 60 to 75 minutes after its last point; about 20 bytes of memory per series counted); a point of a series new to a full hour is answered 400; 0 off"),
		intKey(&c.ingest.seriesLimits.MaxDaily, "tsd.core.max_daily_series", 0, 0, 1<<30, "distinct series that may be written in a sliding day (24 to 30 hours after a series' last point); a point of a series new to a full day is answered 400; 0 off"),
		intKey(&c.ingest.seriesLimits.MaxPerMetric, "tsd.core.max_series_per_metric", 0, 0, 1<<30, "series one metric may have in the series index; a point of a new series of a metric that has them is answered 400; 0 off"),
		intKey(&c.ingest.telnetMaxLine, "tsd.network.telnet.max_line", 64<<10, 1024, 1<<30, "longest telnet line in bytes; a longer one is answered with an error and skipped"),
		durationKey(&c.writeTimeout, "tsd.network.write_timeout", time.Minute, "how long a client, HTTP or telnet, may take no byte of a reply before its connection is closed; past it the client must keep taking the reply at tsd.network.write_min_rate; 0 none"),
		intKey(&c.writeMinRate, "tsd.network.write_min_rate", 1024, 1, 1<<30, "bytes per second a client must take a reply at, on average, once it has had tsd.network.write_timeout to start; a slower one is closed (a reader that stopped while the kernel trickles bytes to it)"),
		bytesKey(&c.query.maxBytes, "tsd.query.limits.bytes.default", 1<<30, "most bytes of points one query may read (16 per point), 0 or -1 unlimited; over it the query is answered 413"),
		int64Key(&c.query.maxPoints, "tsd.query.limits.data_points.default", 0, "most data points one query may read, 0 unlimited; over it the query is answered 413"),
		int64Key(&c.query.maxSeries, "tsd.query.limits.series.default", 0, "most series one query may read, 0 unlimited; over it the query is answered 413"),
		int64Key(&c.query.maxOutputPoints, "tsd.query.limits.output_points", opentsdb.DefaultMaxOutputPoints, "most data points one /api/query answer may hold, 0 unlimited: a downsampling with a fill policy (or all) whose groups x buckets pass it is answered 413 before reading, any other answer is cut short when it passes it"),
		int64Key(&c.query.timeoutMs, "tsd.query.timeout", 120000, "milliseconds a query may run before it is answered 408, 0 none; also the longest wait for a query slot"),
		positiveDurationKey(&c.query.promLookback, "tsd.query.promql.lookback_delta", promql.DefaultLookbackDelta, "how far back a PromQL instant selector looks for a series' last sample (Prometheus's --query.lookback-delta)"),
		intKey(&c.query.promMaxSamples, "tsd.query.promql.max_samples", promql.DefaultMaxSamples, 1, math.MaxInt32, "samples one PromQL query may hold in memory at once; over it the query is answered 422 execution (Prometheus's --query.max-samples)"),
		positiveDurationKey(&c.query.promTimeout, "tsd.query.promql.timeout", promql.DefaultTimeout, "how long a PromQL query may run (Prometheus's --query.timeout); when only tsd.query.timeout is set, that"),
		bytesKey(&c.query.promCache, "tsd.query.promql.cache.size", 64<<20, "memory for whole answers of PromQL range queries, given again while nothing they read has changed; 0 or -1 off, and off on a daemon that shares its store with other writers (the bigtable engine, tsd.mode ro)"),
		intKey(&c.query.promCacheMinSteps, "tsd.query.promql.cache.min_steps", promapi.DefaultCacheMinSteps, 1, math.MaxInt32, "fewest steps per series a PromQL range query needs for its answer to be kept (VictoriaMetrics' threshold)"),
		newKey(&c.query.promFeatures, "tsd.query.promql.features", "", "list", checkPromFeatures, func(s string) string { return s }, "comma list of Prometheus's PromQL feature names to turn on, all off by default as in Prometheus: "+strings.Join(promql.KnownFeatures(), ", ")),
		boolKey(&c.query.promKeepNames, "tsd.query.promql.keep_grouped_names", true, "answer an aggregation by __name__ over series whose names a function dropped, which Prometheus refuses (\"vector cannot contain metrics with the same labelset\"), with a series per name as VictoriaMetrics does (TSBS's queries); false refuses it as Prometheus does"),
		intKey(&c.query.maxConcurrent, "tsd.query.max_concurrent", admit.DefaultMaxConcurrent(), 1, 1<<20, "queries, OpenTSDB's and PromQL's together, that run at once (default 2 x the cores the process may use)"),
		intKey(&c.query.maxQueued, "tsd.query.max_queued", admit.DefaultMaxQueued, 0, 1<<20, "queries that wait for one of those slots; one more is answered 503 with Retry-After (0: none waits)"),
		boolKey(&c.query.allowDelete, "tsd.http.query.allow_delete", false, "let /api/query delete the rows it reads (delete=true or the DELETE verb)"),
		boolKey(&c.access.allowStateChangingGET, "tsd.http.allow_state_changing_get", false, "let a GET (or method_override) assign or rename UIDs, change uidmeta, write or delete annotations, drop caches or delete through /api/query, as OpenTSDB did; false answers such a GET 405, since any web page can make a browser send one"),
		boolKey(&c.access.jsonp, "tsd.http.jsonp.enable", false, "answer ?jsonp=fn on OpenTSDB routes as fn(<json>); false answers 400, since JSONP lets any web page read the answer"),
		stringKey(&c.access.corsDomains, "tsd.http.request.cors_domains", "", "origins (comma list, or *) allowed to read answers cross-origin, preflight OPTIONS included; empty: no CORS"),
		stringKey(&c.access.corsHeaders, "tsd.http.request.cors_headers", api.DefaultCORSHeaders, "request headers a CORS preflight allows"),
		enumKey(&c.access.mode, "tsd.mode", modeReadWrite, []string{modeReadWrite, modeReadOnly, modeWriteOnly}, "rw serves reads and writes; ro serves no write route or telnet put and writes nothing to the store (it may share one with writers); wo serves no query route"),
		bytesKey(&c.query.rowCache, "tsd.query.row_cache.size", read.DefaultRowCacheBytes, "memory for decoded rows kept for later queries (24 bytes a point; once full, only rows read twice enter); 0 or -1 off"),
		bytesKey(&c.query.rowReserve, "tsd.query.row_cache.reserve", read.DefaultRowCacheReserve, "memory kept resident for the row cache's new entries, filled as the daemon starts (not with tsd.mode=wo) and refilled in the background, at full speed only while no query runs, so a cold query does not stall on fresh pages; a row that finds it empty is read uncached and cached later; 0 or -1: entries from the heap"),
		boolKey(&c.query.skipTagVs, "tsd.query.skip_unresolved_tagvs", false, "ignore unknown tag values in literal filters instead of answering 400"),
		newKey(&c.query.timezone, "tsd.core.timezone", "", "zone", checkTimezone, func(s string) string { return s }, "IANA zone (America/Denver) of absolute query dates and calendar downsampling when a query names no timezone; empty is UTC"),
		enumKey(&c.obs.logLevel, "tsd.log.level", "info", []string{"debug", "info", "warn", "error"}, "least severe log lines written to stderr"),
		enumKey(&c.obs.logFormat, "tsd.log.format", "text", []string{"text", "json"}, "log line format: text (key=value) or json (one object a line)"),
		durationKey(&c.obs.slowQuery, "tsd.query.slow_log_threshold", api.DefaultSlowQueryThreshold, "queries (any API) taking at least this long are logged at WARN with their text; 0 off"),
		stringKey(&c.obs.accessLog, "tsd.http.access_log", "", "file to append one line per HTTP request to (client, user, method, path, status, bytes, seconds), or stdout; lines are dropped and counted, never waited for, when the file is slow; empty: off"),
		durationKey(&c.obs.selfScrape, "tsd.stats.self_scrape_interval", 0, "how often tsd stores its own /metrics in itself (job=tsd, instance=<host>:<port>), as remote_write points; 0 off"),
		stringKey(&c.bigtableProject, "google.bigtable.project.id", "", "Google Cloud project of the Bigtable instance (engine bigtable)"),
		stringKey(&c.bigtableInstance, "google.bigtable.instance.id", "", "Bigtable instance ID (engine bigtable)"),
		boolKey(&c.bigtableCreate, "tsd.storage.bigtable.create_tables", true, "create missing Bigtable tables and families at start (false only checks them)"),
		histogramKey(&c.histograms),
	}, c.rollupKeys()...)
}
