package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// rollupConfig is the tsd.rollups.* keys.
type rollupConfig struct {
	enable         bool
	text           string         // tsd.rollups.config as given: JSON or a path ending .json
	parsed         *rollup.Config // its parse; nil when not given
	tagRaw         bool
	aggTagKey      string
	rawAggTagValue string
	blockDerived   bool
	// active is the configuration the daemon runs with after prepareStore:
	// the store's record, extended by the given one; nil when off.
	active *rollup.Config
}

// parseRollupConfig reads tsd.rollups.config: OpenTSDB's JSON, or the path
// of a file holding it when the value ends with .json.
func (rc *rollupConfig) parseRollupConfig(s string) (string, error) {
	rc.parsed = nil
	if strings.TrimSpace(s) == "" {
		return s, nil
	}
	doc := []byte(s)
	if strings.HasSuffix(s, ".json") {
		b, err := os.ReadFile(s)
		if err != nil {
			return s, err
		}
		doc = b
	}
	cfg, err := rollup.ParseConfig(doc)
	if err != nil {
		return s, err
	}
	rc.parsed = cfg
	return s, nil
}

// rollupKeys are the tsd.rollups.* keys (OpenTSDB's names).
func (c *config) rollupKeys() []*key {
	rc := &c.rollups
	return []*key{
		boolKey(&rc.enable, "tsd.rollups.enable", true, "compute rollups at flush and compaction and accept /api/rollup and telnet rollup (on by default, unlike OpenTSDB)"),
		newKey(&rc.text, "tsd.rollups.config", "", "json", rc.parseRollupConfig, func(s string) string { return s }, "rollup configuration, OpenTSDB's JSON or the path of a .json file; empty: 1h rows of hourly cells and 1d rows of daily cells (recorded with the store: intervals may be added, not changed)"),
		boolKey(&rc.tagRaw, "tsd.rollups.tag_raw", false, "tag rollups written through /api/rollup without a group-by aggregator with tsd.rollups.agg_tag_key=tsd.rollups.raw_agg_tag_value"),
		stringKey(&rc.aggTagKey, "tsd.rollups.agg_tag_key", "_aggregate", "tag key naming the group-by aggregator of pre-aggregated series"),
		stringKey(&rc.rawAggTagValue, "tsd.rollups.raw_agg_tag_value", "RAW", "tsd.rollups.agg_tag_key value of raw (not pre-aggregated) series"),
		boolKey(&rc.blockDerived, "tsd.rollups.block_derived", true, "refuse /api/rollup points whose rollup or group-by aggregator is derived (avg, dev)"),
	}
}

// configured returns the rollup configuration the keys ask for.
func (rc *rollupConfig) configured() *rollup.Config {
	if rc.parsed != nil {
		return rc.parsed
	}
	return rollup.DefaultConfig()
}

// prepareRollups settles the rollup configuration against the store's
// record and creates the tables. A new store records the configured one;
// a store with a record keeps it, and a given tsd.rollups.config may add
// intervals to it (recorded, then `tsd rollup rebuild` fills them) but not
// change or remove one. A store written before rollups existed gets the
// configured one recorded.
func (c *config) prepareRollups(ctx context.Context, db storage.DB, meta storage.Table, log *slog.Logger) error {
	rc := &c.rollups
	rc.active = nil
	if !rc.enable {
		return nil
	}
	given := c.byName["tsd.rollups.config"].given && rc.parsed != nil
	cfg := rc.configured()
	for range 8 { // check-and-put rounds against a daemon starting beside us
		recText, has, err := schema.ReadRollups(ctx, meta)
		if errors.Is(err, storage.ErrCorruption) && errors.As(err, new(*storage.DamagedRangeError)) {
			// The record's row is in a damaged file, as prepareStore allows
			// for the settings: run with the configured rollups, record
			// nothing, until the store is repaired.
			log.Error("rollup record unreadable (damaged store); using the configured rollups until the store is repaired (tsd repair)", "err", err)
			break
		}
		if err != nil {
			return err
		}
		if has {
			rec, err := rollup.ParseConfig(recText)
			if err != nil {
				return fmt.Errorf("tsd.rollups.config recorded with the store does not parse: %w", err)
			}
			if !given {
				cfg = rec
				break
			}
			added, err := cfg.Extends(rec)
			if err != nil {
				return fmt.Errorf("tsd.rollups.config: %w", err)
			}
			if len(added) == 0 {
				break
			}
			log.Warn("rollup intervals added; run `tsd rollup rebuild` to fill them for existing data", "intervals", added)
		}
		text, err := cfg.MarshalJSON()
		if err != nil {
			return err
		}
		err = schema.WriteRollups(ctx, meta, recText, text)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record tsd.rollups.config: %w", err)
		}
		break
	}
	if def := cfg.Default(); def != nil && def.Table != c.dataTable {
		return fmt.Errorf("tsd.rollups.config: the default interval's table %q is not the data table (tsd.storage.hbase.data_table = %q)", def.Table, c.dataTable)
	}
	var specs []storage.TableSpec
	for _, iv := range cfg.Intervals {
		if !iv.Default {
			specs = append(specs, schema.DataTableSpec(iv.Table))
		}
		specs = append(specs, schema.DataTableSpec(iv.PreAggTable))
	}
	if _, err := storage.EnsureTables(ctx, db, specs...); err != nil {
		return fmt.Errorf("rollup tables: %w", err)
	}
	rc.active = cfg
	names := make([]string, 0, len(cfg.Intervals))
	for _, iv := range cfg.Intervals {
		names = append(names, iv.Name)
	}
	log.Info("rollups on", "intervals", names)
	return nil
}

// flushRollups returns the flusher's rollup options (nil when off).
func (c *config) flushRollups(ctx context.Context, db storage.DB) (*flush.RollupOptions, error) {
	cfg := c.rollups.active
	if cfg == nil {
		return nil, nil
	}
	// A Pebble store is the daemon's alone (its lock file keeps another
	// process out); a Bigtable instance may have other daemons writing.
	o := &flush.RollupOptions{Config: cfg, Tables: make([]storage.Table, len(cfg.Intervals)), SoleWriter: c.engine != "bigtable"}
	for i, iv := range cfg.Intervals {
		if iv.Default {
			continue
		}
		t, err := db.Table(ctx, iv.Table)
		if err != nil {
			return nil, err
		}
		o.Tables[i] = t
	}
	return o, nil
}

// serviceRollups returns the writer's options for /api/rollup and telnet
// rollup (nil when rollups are off: such points are refused).
func (c *config) serviceRollups(ctx context.Context, db storage.DB, reg head.SeriesRegistrar, changes *changes.Tracker) (*service.RollupOptions, error) {
	cfg := c.rollups.active
	if cfg == nil {
		return nil, nil
	}
	layout, err := c.layout()
	if err != nil {
		return nil, err
	}
	o := &service.RollupOptions{Config: cfg, Tables: map[string]storage.Table{}, Layout: &layout, Format: c.settings.Format, Changes: changes,
		TagRaw: c.rollups.tagRaw, AggTagKey: c.rollups.aggTagKey, RawAggTagValue: c.rollups.rawAggTagValue,
		BlockDerived: c.rollups.blockDerived, Registrar: reg}
	for _, iv := range cfg.Intervals {
		for _, name := range []string{iv.Table, iv.PreAggTable} {
			t, err := db.Table(ctx, name)
			if err != nil {
				return nil, err
			}
			o.Tables[name] = t
		}
	}
	return o, nil
}

// rollupRetention returns the retention of each rollup table a
// tsd.storage.retention rule names (`@1h *:1y`); a rule naming no
// configured interval is refused.
func (c *config) rollupRetention(ctx context.Context, db storage.DB, rules *retention.Rules) ([]flush.RollupRetention, error) {
	var out []flush.RollupRetention
	for _, name := range rules.Intervals() {
		var iv *rollup.Interval
		ok := false
		if cfg := c.rollups.active; cfg != nil {
			iv, ok = cfg.ByName(name)
		}
		if !ok || iv.Default {
			return nil, fmt.Errorf("tsd.storage.retention: @%s names no rollup interval of tsd.rollups.config (rollups on: %v)", name, c.rollups.active != nil)
		}
		t, err := db.Table(ctx, iv.Table)
		if err != nil {
			return nil, err
		}
		out = append(out, flush.RollupRetention{Table: t, Interval: iv, Rules: rules.ForInterval(name)})
	}
	return out, nil
}
