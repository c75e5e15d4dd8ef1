// Package grafana holds what connects Grafana to tsd: provisioning files
// for Grafana's data sources (provisioning/datasources/) and, in its
// tests, fixtures that replay the requests Grafana's data sources send
// against a real tsd binary and assert the response fields Grafana parses
// (shared/spec/clients.md).
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
package grafana
