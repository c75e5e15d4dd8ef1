package main

import "strings"

// openTSDBKeys are OpenTSDB 2.4 settings tsd does not use, gathered from
// OpenTSDB's configuration page (user_guide/configuration), its defaults
// (src/utils/Config.java), the opentsdb.conf it ships (older spellings such
// as tsd.network.tcpnodelay) and its Bigtable backend page. A file or flag
// setting one is a warning, not an error, so an existing opentsdb.conf
// starts. When tsd builds one of these features, move the key from here to
// keyTable (a test refuses a key in both).
var openTSDBKeys = setOf(
	// core
	"tsd.core.authentication.enable", "tsd.core.authentication.plugin",
	"tsd.core.bulk.allow_out_of_order_timestamps",
	"tsd.core.enable_api", "tsd.core.enable_ui",
	"tsd.core.meta.cache.enable", "tsd.core.meta.cache.plugin",
	"tsd.core.meta.enable_tracking", "tsd.core.plugin_path",
	"tsd.core.preload_uid_cache", "tsd.core.preload_uid_cache.max_entries",
	"tsd.core.stats_with_port",
	"tsd.core.storage_exception_handler.enable", "tsd.core.storage_exception_handler.plugin",
	"tsd.core.uid.random_metrics",
	// http
	"tsd.http.cachedir", "tsd.http.header_tag",
	"tsd.http.request.enable_chunked", "tsd.http.request.max_chunk",
	"tsd.http.rpc.plugins", "tsd.http.show_stack_trace", "tsd.http.staticroot",
	// network
	"tsd.network.async_io", "tsd.network.backlog", "tsd.network.keep_alive",
	"tsd.network.keepalive", "tsd.network.reuse_address", "tsd.network.reuseaddress",
	"tsd.network.tcp_no_delay", "tsd.network.tcpnodelay", "tsd.network.worker_threads",
	// query
	"tsd.query.allow_simultaneous_duplicates", "tsd.query.enable_fuzzy_filter",
	"tsd.query.filter.expansion_limit",
	"tsd.query.limits.bytes.allow_override",
	"tsd.query.limits.data_points.allow_override",
	"tsd.query.limits.overrides.config", "tsd.query.limits.overrides.interval",
	"tsd.query.multi_get.batch_size", "tsd.query.multi_get.concurrent",
	"tsd.query.multi_get.enable", "tsd.query.multi_get.get_all_salts",
	// rollups
	"tsd.rollups.split_query.enable",
	// plugins, stats, telnet
	"tsd.rpc.plugins", "tsd.rpc.telnet.return_errors",
	"tsd.rtpublisher.enable", "tsd.rtpublisher.plugin",
	"tsd.search.enable", "tsd.search.plugin",
	"tsd.startup.enable", "tsd.startup.plugin", "tsd.stats.canonical",
	"tsd.timeseriesfilter.enable", "tsd.timeseriesfilter.plugin",
	"tsd.uidfilter.enable", "tsd.uidfilter.plugin",
	"tsd.uid.lru.enable", "tsd.uid.lru.id.size", "tsd.uid.lru.name.size", "tsd.uid.use_mode",
	// storage
	"tsd.storage.compaction.flush_interval", "tsd.storage.compaction.flush_speed",
	"tsd.storage.compaction.max_concurrent_flushes", "tsd.storage.compaction.min_flush_threshold",
	"tsd.storage.enable_appends", "tsd.storage.enable_compaction", "tsd.storage.fix_duplicates",
	"tsd.storage.flush_interval", "tsd.storage.get_date_tiered_compaction_start",
	"tsd.storage.hbase.prefetch_meta", "tsd.storage.hbase.scanner.maxNumRows",
	"tsd.storage.hbase.zk_basedir", "tsd.storage.hbase.zk_quorum",
	"tsd.storage.repair_appends", "tsd.storage.use_max_value", "tsd.storage.use_otsdb_timestamp",
	// AsyncBigtable (OpenTSDB's Bigtable backend)
	"google.bigtable.auth.json.keyfile", "google.bigtable.auth.service.account.enable",
	"google.bigtable.cluster.name", "google.bigtable.grpc.channel.count",
	"google.bigtable.zone.id", "google.bigtable.zone.name",
)

// openTSDBClientPrefix covers the AsyncHBase client settings (hbase.rpc.timeout,
// hbase.zookeeper.quorum, hbase.client.connection.impl, ...) that OpenTSDB
// passes through from its configuration file.
const openTSDBClientPrefix = "hbase."

// isOpenTSDBKey reports whether name is an OpenTSDB setting tsd ignores.
func isOpenTSDBKey(name string) bool {
	return openTSDBKeys[name] || strings.HasPrefix(name, openTSDBClientPrefix)
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
