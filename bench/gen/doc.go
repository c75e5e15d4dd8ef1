// Package gen is tsd's pinned benchmark dataset: a deterministic generator of
// devops-style points (after TSBS's "devops" cpu use case) and the writers that
// turn them into every wire format tsd ingests. Every figure in bench/ and in
// the issues is measured on this data, so its definition is fixed here and
// guarded by golden hashes in the tests: changing a byte of the output is a
// deliberate, reviewed change.
//
// # Dataset
//
// A dataset is Hosts hosts; each host carries ten tags, in this order:
// hostname (host_<i>), region, datacenter, rack, os, arch, team, service,
// service_version and service_environment. The values other than hostname are
// drawn once per host from a PCG stream seeded with (Seed^tagStream, host), so
// host i has the same tags whatever the host count.
//
// The devops shape has ten metrics per host, cpu_usage_user, cpu_usage_system,
// cpu_usage_idle, cpu_usage_nice, cpu_usage_iowait, cpu_usage_irq,
// cpu_usage_softirq, cpu_usage_steal, cpu_usage_guest and cpu_usage_guest_nice
// (Influx measurement "cpu", fields usage_user ... usage_guest_nice). The high
// cardinality shape has the single metric cpu_usage_user on up to 1,000,000
// hosts. The counter shape has ten monotonic counters, net_bytes_recv,
// net_bytes_sent, net_packets_recv, net_packets_sent, net_err_in, net_err_out,
// net_drop_in, net_drop_out, net_icmp_in and net_icmp_out (Influx measurement
// "net"), that restart from zero about twice a day.
//
// A point exists every Interval (default 10 s) from Start (default
// 2026-01-01T00:00:00Z, DefaultStart) over Span (default 24 h), for every
// series. Iteration order is time, then host, then metric, so the points of
// one host at one instant are consecutive (an Influx line).
//
// # Values
//
// Each series (host, metric) owns a PCG stream seeded with
// (Seed, host<<8|metric); its values do not depend on the host count or on the
// iteration order. A normal draw is Box-Muller over two 53-bit uniforms.
//
//   - ValuesInt: integer percentages 0..100. The first value is uniform in
//     0..100; each next value adds round(N(0,1)) and clamps to 0..100. The
//     steps' entropy is about 2.1 bits, the 0.26 bytes per point floor the
//     dense codec aims at.
//   - ValuesFloat: a random walk with step N(0,1) kept on two decimals: the
//     state is integer hundredths, the step is round(100*N(0,1)), clamped to
//     0.00..100.00. The value is the decimal string ("42.07") and the float64
//     parsed from it (the nearest double, float64(hundredths)/100).
//   - Counters (ShapeCounters) are integers whatever the value mode: each step
//     adds max(0, rate+round(N(0,1)*rate/4)) with a per-series rate in
//     100..10,000, and with probability 1/4320 per step the counter restarts
//     from zero.
//
// # Formats
//
// AppendPut writes an OpenTSDB telnet "put" line (seconds when the timestamp
// is whole seconds, else milliseconds); AppendJSON one /api/put object;
// AppendInflux one Influx line with every field of a host at one instant
// (nanosecond timestamp, integers as NNi in int mode); RemoteWrite builds
// Prometheus remote_write 1.0 requests (protobuf prompb.WriteRequest, snappy
// block compressed) with one sample per series and by default 1,000 series a
// request. Encoder cuts any of them into batches.
//
// # Allocation
//
// Next fills a caller-owned Point and appends the value text into the Point's
// own buffer: after the first call it allocates nothing. The Append functions
// append into the caller's slice.
package gen
