package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/ratelog"
)

// obsConfig is what the daemon tells about itself: the log's level and
// format, the slow-query threshold, the access log and the self-scrape.
type obsConfig struct {
	logLevel   string        // tsd.log.level
	logFormat  string        // tsd.log.format
	slowQuery  time.Duration // tsd.query.slow_log_threshold; 0 off
	accessLog  string        // tsd.http.access_log; "" off, "stdout", or a file
	selfScrape time.Duration // tsd.stats.self_scrape_interval; 0 off

	// Set by serve before the components that report to them are made.
	metrics *api.Metrics
	rlog    *ratelog.Logger
}

// newLogger is the daemon's logger on w, with tsd.log.level and
// tsd.log.format.
func (o *obsConfig) newLogger(w io.Writer) *slog.Logger {
	var level slog.Level
	switch o.logLevel {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	ho := &slog.HandlerOptions{Level: level}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// openAccessLog opens tsd.http.access_log for appending: nil when off,
// the process's stdout for "stdout". close closes the file.
func (o *obsConfig) openAccessLog() (w io.Writer, close func() error, err error) {
	switch o.accessLog {
	case "":
		return nil, func() error { return nil }, nil
	case "stdout":
		return os.Stdout, func() error { return nil }, nil
	}
	f, err := os.OpenFile(o.accessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("tsd.http.access_log: %w", err)
	}
	return f, f.Close, nil
}

// wireAPI sets the api options of this config: the metrics registry,
// the slow-query threshold and the access log.
func (o *obsConfig) wireAPI(opts *api.Options, access io.Writer) {
	opts.Metrics = o.metrics
	opts.SlowQueryThreshold = o.slowQuery
	if o.slowQuery == 0 {
		opts.SlowQueryThreshold = -1 // off; the api's 0 is its default
	}
	opts.AccessLog = access
}

// wireTelnet makes the telnet handler log refused puts and time its
// batches.
func (o *obsConfig) wireTelnet(t *service.TelnetOptions) {
	t.RateLog = o.rlog
	if o.metrics != nil {
		t.ObserveBatch = o.metrics.IngestObserver(api.ProtocolTelnet)
	}
}
