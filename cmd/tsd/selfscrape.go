package main

import (
	"context"
	"log/slog"
	"math"
	"net"
	"os"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/series"
)

// Labels self-scraped series carry, besides their own.
const (
	selfScrapeJob = "tsd"
)

// selfScrapeBatch is how many points a self-scrape commits at once.
const selfScrapeBatch = 1000

// selfScraper stores the daemon's own /metrics exposition in the daemon
// every interval (tsd.stats.self_scrape_interval), as a Prometheus
// server scraping tsd and sending the samples by remote_write would: the
// same names (histograms as _bucket with le, _sum and _count), each
// sample with job="tsd" and instance="<host>:<port>", through the
// writer's remote_write session (its points are counted under
// protocol remote_write). Its goroutine runs from start to stop.
type selfScraper struct {
	gather   func() ([]*dto.MetricFamily, error)
	w        *service.Writer
	instance string
	log      *slog.Logger
	stop     chan struct{}
	done     chan struct{}
	pt       parse.Point // reused between samples
}

// startSelfScrape starts the goroutine, or returns nil when the interval
// is 0 or the daemon cannot write.
func startSelfScrape(interval time.Duration, gather func() ([]*dto.MetricFamily, error), w *service.Writer, instance string, log *slog.Logger) *selfScraper {
	if interval <= 0 {
		return nil
	}
	if w == nil {
		log.Warn("tsd.stats.self_scrape_interval is ignored: this daemon writes nothing (tsd.mode=ro)")
		return nil
	}
	s := &selfScraper{gather: gather, w: w, instance: instance, log: log,
		stop: make(chan struct{}), done: make(chan struct{})}
	go s.run(interval)
	log.Info("self-scrape on", "interval", interval, "job", selfScrapeJob, "instance", instance)
	return s
}

// close stops the goroutine and waits for it; nil-safe.
func (s *selfScraper) close() {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
}

func (s *selfScraper) run(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if n, err := s.scrape(); err != nil {
				s.log.Warn("self-scrape failed", "points", n, "err", err)
			}
		}
	}
}

// scrape gathers the exposition once and writes it; it returns the
// points written and the first error.
func (s *selfScraper) scrape() (int, error) {
	mfs, gerr := s.gather() // the families gathered are written even with an error
	sess := s.w.Session(service.RemoteWrite)
	defer sess.Release()
	now := time.Now().UnixMilli()
	var written int
	var first error
	add := func(name string, m *dto.Metric, extra, extraValue string, v float64) {
		s.point(name, m, extra, extraValue, now, v)
		if err := sess.Add(context.Background(), &s.pt); err != nil && first == nil {
			first = err
		}
		if sess.Pending() >= selfScrapeBatch {
			n := sess.Pending()
			if err := sess.Commit(false); err != nil && first == nil {
				first = err
			} else if err == nil {
				written += n
			}
		}
	}
	for _, mf := range mfs {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m, "", "", m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m, "", "", m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m, "", "", m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				for _, q := range sm.GetQuantile() {
					add(name, m, "quantile", formatFloat(q.GetQuantile()), q.GetValue())
				}
				add(name+"_sum", m, "", "", sm.GetSampleSum())
				add(name+"_count", m, "", "", float64(sm.GetSampleCount()))
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					if math.IsInf(b.GetUpperBound(), +1) {
						continue // written below from the count
					}
					add(name+"_bucket", m, "le", formatFloat(b.GetUpperBound()), float64(b.GetCumulativeCount()))
				}
				add(name+"_bucket", m, "le", "+Inf", float64(h.GetSampleCount()))
				add(name+"_sum", m, "", "", h.GetSampleSum())
				add(name+"_count", m, "", "", float64(h.GetSampleCount()))
			}
		}
	}
	n := sess.Pending()
	if err := sess.Commit(false); err != nil && first == nil {
		first = err
	} else if err == nil {
		written += n
	}
	if first == nil {
		first = gerr
	}
	return written, first
}

// point fills s.pt with one sample: the metric's labels, one extra label
// (le, quantile) when given, and job and instance.
func (s *selfScraper) point(name string, m *dto.Metric, extra, extraValue string, t int64, v float64) {
	s.pt.Reset()
	s.pt.Metric = []byte(name)
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" && l.GetName() != "job" && l.GetName() != "instance" {
			s.pt.AddTag([]byte(l.GetName()), []byte(l.GetValue()))
		}
	}
	if extra != "" {
		s.pt.AddTag([]byte(extra), []byte(extraValue))
	}
	s.pt.AddTag([]byte("job"), []byte(selfScrapeJob))
	s.pt.AddTag([]byte("instance"), []byte(s.instance))
	s.pt.Value = series.Float64Point(t, v)
}

// formatFloat is a bucket bound or quantile as Prometheus writes it.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// selfInstance is the instance label of self-scraped series: the host
// name and the port the daemon listens on, as a scraper would name it.
func selfInstance(addr net.Addr) string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	port := "0"
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
	}
	return net.JoinHostPort(host, port)
}
