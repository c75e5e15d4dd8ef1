// Package grafana holds what connects Grafana to tsd: provisioning files
// for Grafana's data sources (provisioning/datasources/) and, in its
// tests, fixtures that replay the requests Grafana's data sources send
// against a real tsd binary and assert the response fields Grafana parses
// (as read from Grafana's OpenTSDB and Prometheus data source code).
//
// It imports nothing of tsd's at run time; its tests build and start
// cmd/tsd, write points through the real ingest endpoints (/api/put,
// Prometheus remote_write) and query over HTTP only.
//
// The Prometheus data source (provisioning/datasources/tsd-prometheus.yaml)
// points at http://localhost:4242 with httpMethod POST, Grafana's default;
// the fixtures in prometheus_test.go are its health check (1+1 at time 4,
// then buildinfo), range and instant queries as POST forms, the label,
// value and series look-ups with match[], and the exemplar probe.
//
// The OpenTSDB data source (provisioning/datasources/tsd-opentsdb.yaml)
// points at http://localhost:4242 in 2.4 mode (tsdbVersion 4, seconds,
// lookupLimit 1000). Its fixtures (opentsdb_*_test.go, request bodies and
// GET paths in testdata/opentsdb_*, with ${START_MS}-style placeholders
// for times) replay both generations of that data source: the browser's
// one body per panel (ms start, no end for a range ending now, showQuery
// in 2.3 mode, msResolution), the Go backend's one POST per query (start
// and end in seconds, ?arrays=true in 2.4 mode), the alerting backend's
// ms body, the suggest, lookup, aggregator and filter-type calls, and
// annotation queries. Points go in over /api/put and telnet, notes over
// /api/annotation; every expected value is computed by the test's own
// model of OpenTSDB's downsample, rate and group-by. They run for both row
// formats, from the head and again from the store after a restart.
//
// dashboards/tsd.json is a dashboard of tsd's own health on the Prometheus
// data source, loaded by provisioning/dashboards/tsd.yaml; its series are
// those a tsd scraping itself (tsd.stats.self_scrape_interval) stores,
// job="tsd". dashboard_test.go runs each panel's query against such a
// daemon: every metric a panel names must be on /metrics, every panel
// must answer a series.
package grafana
