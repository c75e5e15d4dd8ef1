package saltspread

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// DefaultSeries is the series count: 5,000 hosts x 10 metrics.
const DefaultSeries = 50_000

// ErrInvalid reports a bad Config.
var ErrInvalid = errors.New("saltspread: invalid config")

// Config chooses the series to measure.
type Config struct {
	// Series is the number of series. Default DefaultSeries. The dataset has
	// ceil(Series/10) hosts; the last host keeps only its first metrics when
	// Series is not a multiple of ten.
	Series int
	// Seed is the gen dataset seed (it decides the tag values). Default 1.
	Seed uint64
	// UID configures the UID table. Default uid.Options' defaults (3-byte
	// UIDs); a nil Logger discards the table's messages.
	UID uid.Options
}

// EnsureDefaults fills the zero fields and returns c.
func (c *Config) EnsureDefaults() *Config {
	if c.Series == 0 {
		c.Series = DefaultSeries
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.UID.Logger == nil {
		c.UID.Logger = quiet
	}
	c.UID.EnsureDefaults()
	return c
}

// Validate checks c after EnsureDefaults.
func (c *Config) Validate() error {
	metrics := len(gen.TagKeys) // the devops shape has as many metrics as tags
	if c.Series < 1 || c.Series > gen.MaxHosts*metrics {
		return fmt.Errorf("%w: series %d not in 1..%d", ErrInvalid, c.Series, gen.MaxHosts*metrics)
	}
	return c.UID.Validate()
}

// TSUIDs holds the resolved series: metric UID then tag pairs by tag-key
// UID bytes, in first-seen order.
type TSUIDs struct {
	// Hosts and Metrics are the dataset's dimensions.
	Hosts, Metrics int
	// Keys are the TSUIDs; they share one backing array.
	Keys [][]byte
	// UIDs is the table that assigned them; its widths are the TSUIDs'.
	UIDs *uid.UIDs
}

// Resolve opens the UID table on db and assigns UIDs to the names of
// c.Series devops series in first-seen order. db should be empty for the
// figure to be a fresh tsd's: names already present keep their UIDs.
func Resolve(ctx context.Context, db storage.DB, c Config) (*TSUIDs, error) {
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g, metrics, err := newGen(c)
	if err != nil {
		return nil, err
	}
	u, err := uid.Open(ctx, db, &c.UID)
	if err != nil {
		return nil, fmt.Errorf("saltspread: open uid table: %w", err)
	}
	out := &TSUIDs{Hosts: len(g.Hosts()), Metrics: len(metrics), UIDs: u}
	w := c.UID.Widths
	keyLen := w.Metric + len(gen.TagKeys)*(w.TagK+w.TagV)
	buf := make([]byte, 0, c.Series*keyLen)
	out.Keys = make([][]byte, 0, c.Series)
	tags := make([]uid.Tag, len(gen.TagKeys))
	for _, h := range g.Hosts() {
		for _, m := range metrics {
			if len(out.Keys) == c.Series {
				return out, nil
			}
			fillTags(tags, &h)
			start := len(buf)
			if buf, err = u.ResolvePoint(ctx, buf, []byte(m.Name), tags); err != nil {
				return nil, fmt.Errorf("saltspread: resolve series %d (%s %s): %w", len(out.Keys), m.Name, h.Tags[0], err)
			}
			key := buf[start:len(buf):len(buf)]
			head.SortSeriesKey(key, w)
			out.Keys = append(out.Keys, key)
		}
	}
	return out, nil
}

// newGen returns the devops dataset with enough hosts for c.Series.
func newGen(c Config) (*gen.Gen, []gen.Metric, error) {
	probe, err := gen.New(gen.Config{Hosts: 1, Seed: c.Seed, Shape: gen.ShapeDevops})
	if err != nil {
		return nil, nil, err
	}
	per := len(probe.Metrics())
	hosts := (c.Series + per - 1) / per
	g, err := gen.New(gen.Config{Hosts: hosts, Seed: c.Seed, Shape: gen.ShapeDevops})
	if err != nil {
		return nil, nil, err
	}
	return g, g.Metrics(), nil
}

// fillTags points tags at h's tag names in gen.TagKeys order; ResolvePoint
// sorts them by key in place, so they are refilled for every series.
func fillTags(tags []uid.Tag, h *gen.Host) {
	for i, k := range gen.TagKeys {
		tags[i] = uid.Tag{Key: []byte(k), Value: []byte(h.Tags[i])}
	}
}
