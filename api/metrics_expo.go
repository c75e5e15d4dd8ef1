package api

import (
	"bytes"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"
)

// contentTypeProm is the Prometheus text exposition format, version 0.0.4.
const contentTypeProm = "text/plain; version=0.0.4; charset=utf-8"

// statsCollector turns Options.Stats into client_golang metrics, so that
// one list of figures feeds /api/stats, telnet stats and /metrics. It is
// an unchecked collector (it describes nothing): the list's names are
// only known when it is read.
type statsCollector struct{ stats func() []Stat }

// Describe implements prometheus.Collector.
func (statsCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: a stat named tsd.x.y is
// tsd_x_y (tsd_x_y_total for a counter), its tags are labels, and each
// name takes the help of its first stat.
func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	if c.stats == nil {
		return
	}
	stats := c.stats()
	descs := make(map[string]*prometheus.Desc)
	helps := make(map[string]string)
	for i := range stats {
		st := &stats[i]
		name := promName(st)
		keys := make([]string, len(st.Tags))
		values := make([]string, len(st.Tags))
		for j, t := range st.Tags {
			keys[j], values[j] = promLabel(t.Key), t.Value
		}
		// A desc is keyed by its label names too: one name's stats may
		// carry different tags (tsd.rpc.received type=...).
		key := fmt.Sprint(name, keys)
		d := descs[key]
		if d == nil {
			help, ok := helps[name]
			if !ok {
				help, helps[name] = st.Help, st.Help
			}
			d = prometheus.NewDesc(name, help, keys, nil)
			descs[key] = d
		}
		typ := prometheus.GaugeValue
		if st.Counter {
			typ = prometheus.CounterValue
		}
		m, err := prometheus.NewConstMetric(d, typ, st.Value, values...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
}

// Gather returns the whole /metrics exposition, Options.Stats and
// Options.Metrics merged; a name both define is an error (and the
// families gathered without it are still returned), as is a stat that is
// not a valid metric.
func (s *Server) Gather() ([]*dto.MetricFamily, error) {
	return prometheus.Gatherers{s.opts.Metrics.reg, s.statsReg}.Gather()
}

// handleMetrics is GET /metrics: the Prometheus text format of Gather.
// A gather error is logged and the families gathered are served, as
// promhttp's ContinueOnError does.
func (a *metaAPI) handleMetrics(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	mfs, err := a.s.Gather()
	if err != nil {
		a.s.rlog.Error("metrics.gather", "", "gathering /metrics", "err", err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			a.s.rlog.Error("metrics.encode", "", "encoding /metrics", "family", mf.GetName(), "err", err)
		}
	}
	ctx.SetContentType(contentTypeProm)
	ctx.SetBody(buf.Bytes())
}
