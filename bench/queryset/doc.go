// Package queryset is the bench's query set (issue 4 item 3), each query
// written both as an OpenTSDB /api/query body and as a PromQL range query,
// after TSBS's devops queries:
//
//   - single-1h:   one host, one metric, 1 h, max per minute
//   - single-5-12h: five metrics of one host over 12 h, max per minute
//   - groupby-12h: one metric for all hosts over 12 h, hourly avg by host
//   - max-all-8:   max of all ten metrics for 8 hosts over 8 h, hourly
//   - highcard-10: a filter picking 10 of 100,000 series (highcard shape), 1 h
//
// Every query ends at the dataset's last timestamp (End). A query over
// several metrics is several PromQL expressions, one per metric, as a
// Grafana panel sends them: stock PromQL drops __name__ in max_over_time, so
// one expression over many metrics cannot keep them apart.
package queryset
