package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tsd-db/tsd/storage/pebble"
)

// Latency histograms of the write-ahead log and the store. The library
// packages only call a func(time.Duration) given in their options; the
// histograms are made here and registered in the api's registry, so they
// are in the one /metrics exposition (and self-scraped with it).
var (
	// fsyncBuckets: 100 µs (a fast SSD) to 10 s (a disk in trouble).
	fsyncBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// stallBuckets: 1 ms to 100 s; a stall lasts until a flush or an L0
	// compaction catches up.
	stallBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50, 100}
	// bigtableBuckets: 500 µs to 30 s, the default attempt timeout.
	bigtableBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
)

// observer adapts h to the libraries' func(time.Duration): no
// allocation, a few atomic adds per observation.
func observer(h prometheus.Histogram) func(time.Duration) {
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// walSyncObserver registers tsd_wal_fsync_duration_seconds and returns
// what feeds it (nil without a registry: tools that open the log).
func (o *obsConfig) walSyncObserver() func(time.Duration) {
	return o.histogram("tsd_wal_fsync_duration_seconds",
		"Seconds each write-ahead log segment sync (fsync) took.", fsyncBuckets)
}

// pebbleStallObserver registers tsd_pebble_write_stall_duration_seconds
// and returns what feeds it.
func (o *obsConfig) pebbleStallObserver() func(time.Duration) {
	return o.histogram("tsd_pebble_write_stall_duration_seconds",
		"Seconds each pebble write stall held writes back (flushes or level-0 compactions behind), counted when it ends.", stallBuckets)
}

// bigtableObserver registers tsd_bigtable_request_duration_seconds and
// returns what feeds it.
func (o *obsConfig) bigtableObserver() func(time.Duration) {
	return o.histogram("tsd_bigtable_request_duration_seconds",
		"Seconds each Bigtable RPC attempt took (each retry is one; failed ones included).", bigtableBuckets)
}

// histogram registers one histogram in o.metrics; nil when there is no
// registry or the name is taken (a store opened twice by one process
// keeps its first histogram's figures).
func (o *obsConfig) histogram(name, help string, buckets []float64) func(time.Duration) {
	if o.metrics == nil {
		return nil
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	if err := o.metrics.Register(h); err != nil {
		return nil
	}
	return observer(h)
}

// registerPebbleWAL adds pebble's own log fsync latency to /metrics as
// tsd_pebble_wal_fsync_duration_seconds.
func (o *obsConfig) registerPebbleWAL(db *pebble.DB) {
	if o.metrics != nil {
		_ = o.metrics.Register(pebbleWALCollector{db}) // taken: a second open of one process
	}
}

var pebbleWALDesc = prometheus.NewDesc("tsd_pebble_wal_fsync_duration_seconds",
	"Seconds each fsync of pebble's own write-ahead log took (the store's commits; tsd's log is tsd_wal_fsync_duration_seconds). It restarts from zero when the store reopens after a full disk.",
	nil, nil)

// pebbleWALCollector reads pebble's fsync histogram at each scrape.
// Pebble records nanoseconds in a hundred fine buckets; the exposition
// keeps, for each of fsyncBuckets, pebble's largest bound not above it,
// so every count is exact and the series stay few.
type pebbleWALCollector struct{ db *pebble.DB }

// Describe implements prometheus.Collector.
func (c pebbleWALCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pebbleWALDesc }

// Collect implements prometheus.Collector.
func (c pebbleWALCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.db.Metrics()
	if m == nil || m.LogWriter.FsyncLatency == nil {
		return
	}
	var pm dto.Metric
	if err := m.LogWriter.FsyncLatency.Write(&pm); err != nil || pm.Histogram == nil {
		return
	}
	ch <- prometheus.MustNewConstHistogram(pebbleWALDesc, pm.Histogram.GetSampleCount(),
		pm.Histogram.GetSampleSum()/1e9, rebucket(pm.Histogram.GetBucket(), fsyncBuckets))
}

// rebucket maps cumulative buckets with bounds in nanoseconds onto
// bounds in seconds: for each of want, the largest bound of in not above
// it, once.
func rebucket(in []*dto.Bucket, want []float64) map[float64]uint64 {
	out := make(map[float64]uint64, len(want))
	for _, w := range want {
		var best *dto.Bucket
		for _, b := range in {
			if b.GetUpperBound()/1e9 <= w*(1+1e-9) && b.GetUpperBound() > 0 {
				best = b
			}
		}
		if best != nil {
			out[best.GetUpperBound()/1e9] = best.GetCumulativeCount()
		}
	}
	return out
}
