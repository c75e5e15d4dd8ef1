package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/tsd-db/tsd/schema"
)

// newConfig returns a config holding every key's default.
func newConfig() *config {
	c := &config{byName: map[string]*key{}}
	c.keys = c.keyTable()
	for _, k := range c.keys {
		c.byName[k.name] = k
	}
	return c
}

// flagKey finds the key a flag names, by key name or alias.
func (c *config) flagKey(name string) *key {
	if k := c.byName[name]; k != nil {
		return k
	}
	for _, k := range c.keys {
		if k.alias != "" && k.alias == name {
			return k
		}
	}
	return nil
}

// isBoolFlag tells parseArgs which flags may stand alone.
func (c *config) isBoolFlag(name string) bool {
	k := c.flagKey(name)
	return k != nil && k.typ == "bool"
}

// load applies the --config file, then the flags, then checks settings
// that depend on each other. OpenTSDB keys tsd does not use are logged as
// warnings; anything else wrong is an error naming the key and its source.
func (c *config) load(cl cmdline, log *slog.Logger) error {
	if cl.config != "" {
		if err := c.loadFile(cl.config, log); err != nil {
			return err
		}
	}
	for _, s := range cl.flags {
		if err := c.apply(s, c.flagKey(s.name), log); err != nil {
			return err
		}
	}
	return c.validate()
}

// loadFile applies an OpenTSDB-style properties file.
func (c *config) loadFile(path string, log *slog.Logger) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	props, err := parseProperties(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range props {
		s := setting{name: p.key, value: p.value, source: fmt.Sprintf("%s:%d", path, p.line)}
		if err := c.apply(s, c.byName[p.key], log); err != nil {
			return err
		}
	}
	return nil
}

// apply stores one setting in k, the key it names (nil if none).
func (c *config) apply(s setting, k *key, log *slog.Logger) error {
	if k == nil {
		if isOpenTSDBKey(s.name) {
			log.Warn("ignoring an OpenTSDB setting tsd does not use", "key", s.name, "at", s.source)
			return nil
		}
		return fmt.Errorf("%s: unknown config key %q (tsd --help lists them)", s.source, s.name)
	}
	if err := k.set(s.value); err != nil {
		return fmt.Errorf("%s: %s = %q: %v", s.source, k.name, s.value, err)
	}
	k.given = true
	return nil
}

// validate checks settings against each other.
func (c *config) validate() error {
	if c.engine == "bigtable" {
		for _, name := range []string{"google.bigtable.project.id", "google.bigtable.instance.id"} {
			if !c.byName[name].given {
				return fmt.Errorf("tsd.storage.engine = bigtable needs %s", name)
			}
		}
	}
	if w := c.settings.SaltWidth; w > 0 && w < 4 && c.settings.SaltBuckets > 1<<(8*w) {
		return fmt.Errorf("tsd.storage.salt.buckets = %d: more buckets than tsd.storage.salt.width = %d bytes can number (%d)",
			c.settings.SaltBuckets, w, 1<<(8*w))
	}
	return nil
}

// storeSettings returns the settings recorded with the store, marking the
// ones the operator set so schema.EnsureRecord checks only those.
func (c *config) storeSettings() schema.Settings {
	s := c.settings
	s.Given = 0
	for _, one := range schema.AllSettings.Each() {
		if c.byName[one.String()].given {
			s.Given |= one
		}
	}
	return s
}
