package main

import (
	"os"
	"strings"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/rowkey/hist"
	"github.com/tsd-db/tsd/storage"
)

// histogramKey is tsd.core.histograms.config: OpenTSDB's codec table as
// JSON or the path of a .json file holding it, checked when it is set.
func histogramKey(dst *string) *key {
	return newKey(dst, "tsd.core.histograms.config", hist.DefaultConfig, "json",
		func(s string) (string, error) { _, err := parseHistogramConfig(s); return s, err },
		func(s string) string { return s },
		"histogram codecs, OpenTSDB's JSON of codec class to id 0..255 or the path of a .json file; empty: /api/histogram and telnet histogram refuse every point")
}

// parseHistogramConfig returns the codec table text asks for; nil when
// it is empty (histograms off).
func parseHistogramConfig(text string) (*hist.Codecs, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	doc := text
	if strings.HasSuffix(text, ".json") {
		b, err := os.ReadFile(text)
		if err != nil {
			return nil, err
		}
		doc = string(b)
	}
	return hist.ParseConfig(doc)
}

// serviceHistograms returns the writer's histogram options.
func (c *config) serviceHistograms(data storage.Table, reg head.SeriesRegistrar, changes *changes.Tracker) (*service.HistogramOptions, error) {
	codecs, err := parseHistogramConfig(c.histograms)
	if err != nil || codecs == nil {
		return nil, err
	}
	layout, err := c.layout()
	if err != nil {
		return nil, err
	}
	return &service.HistogramOptions{Codecs: codecs, Table: data, Layout: &layout, Registrar: reg, Changes: changes}, nil
}
