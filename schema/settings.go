package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
)

// Setting names one recorded setting; a Setting set is a bitmask.
type Setting uint8

const (
	// SettingFormat is tsd.storage.format.
	SettingFormat Setting = 1 << iota
	// SettingSaltWidth is tsd.storage.salt.width.
	SettingSaltWidth
	// SettingSaltBuckets is tsd.storage.salt.buckets.
	SettingSaltBuckets
	// SettingWidthMetric is tsd.storage.uid.width.metric.
	SettingWidthMetric
	// SettingWidthTagK is tsd.storage.uid.width.tagk.
	SettingWidthTagK
	// SettingWidthTagV is tsd.storage.uid.width.tagv.
	SettingWidthTagV
	// AllSettings is every setting.
	AllSettings = SettingFormat | SettingSaltWidth | SettingSaltBuckets |
		SettingWidthMetric | SettingWidthTagK | SettingWidthTagV
)

// settingList is every single setting in record order.
var settingList = []Setting{SettingFormat, SettingSaltWidth, SettingSaltBuckets,
	SettingWidthMetric, SettingWidthTagK, SettingWidthTagV}

// Each returns every single setting of s, in record order.
func (s Setting) Each() []Setting {
	var out []Setting
	for _, one := range settingList {
		if s&one != 0 {
			out = append(out, one)
		}
	}
	return out
}

// String returns the configuration key of a single setting, or the keys
// of a set joined by ", ".
func (s Setting) String() string {
	switch s {
	case SettingFormat:
		return "tsd.storage.format"
	case SettingSaltWidth:
		return "tsd.storage.salt.width"
	case SettingSaltBuckets:
		return "tsd.storage.salt.buckets"
	case SettingWidthMetric:
		return "tsd.storage.uid.width.metric"
	case SettingWidthTagK:
		return "tsd.storage.uid.width.tagk"
	case SettingWidthTagV:
		return "tsd.storage.uid.width.tagv"
	}
	var keys []string
	for _, one := range s.Each() {
		keys = append(keys, one.String())
	}
	return strings.Join(keys, ", ")
}

// qualifier is the setting's column in the record.
func (s Setting) qualifier() string {
	return strings.TrimPrefix(s.String(), "tsd.storage.")
}

// Settings are the store-wide choices recorded in the meta table. They
// never change once data exists.
type Settings struct {
	// Format is the write format. Default FormatDense.
	Format Format
	// SaltWidth is the salt prefix width in bytes, 0..salt.MaxWidth.
	// Default salt.DefaultWidth (1).
	SaltWidth int
	// SaltBuckets is the number of salt buckets, >= 1. Default
	// salt.DefaultBuckets (20).
	SaltBuckets int
	// Widths are the UID widths. Default series.DefaultWidths (3 each).
	Widths series.Widths
	// Given marks the settings the operator set explicitly. A setting not
	// in Given is ignored here: it takes the record's value, or its default
	// in a new store. A given setting that differs from the record is an
	// error.
	Given Setting
}

// DefaultSettings returns the settings of a new store, none given.
func DefaultSettings() Settings {
	return Settings{Format: FormatDense, SaltWidth: salt.DefaultWidth, SaltBuckets: salt.DefaultBuckets,
		Widths: series.DefaultWidths()}
}

// Salt returns the salt the settings describe.
func (s *Settings) Salt() (salt.Salt, error) { return salt.New(s.SaltWidth, s.SaltBuckets) }

// value returns the record text of one setting.
func (s *Settings) value(one Setting) string {
	switch one {
	case SettingFormat:
		return s.Format.String()
	case SettingSaltWidth:
		return strconv.Itoa(s.SaltWidth)
	case SettingSaltBuckets:
		return strconv.Itoa(s.SaltBuckets)
	case SettingWidthMetric:
		return strconv.Itoa(s.Widths.Metric)
	case SettingWidthTagK:
		return strconv.Itoa(s.Widths.TagK)
	}
	return strconv.Itoa(s.Widths.TagV)
}

// set parses the record text of one setting into s.
func (s *Settings) set(one Setting, v string) error {
	if one == SettingFormat {
		f, err := ParseFormat(v)
		s.Format = f
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%s: %q is not an integer", one, v)
	}
	switch one {
	case SettingSaltWidth:
		s.SaltWidth = n
	case SettingSaltBuckets:
		s.SaltBuckets = n
	case SettingWidthMetric:
		s.Widths.Metric = n
	case SettingWidthTagK:
		s.Widths.TagK = n
	default:
		s.Widths.TagV = n
	}
	return nil
}

// Validate checks the ranges of every setting.
func (s *Settings) Validate() error {
	switch {
	case !s.Format.Valid():
		return fmt.Errorf("%s: unknown format %d", SettingFormat, s.Format)
	case s.SaltWidth < 0 || s.SaltWidth > salt.MaxWidth:
		return fmt.Errorf("%s = %d: must be 0..%d", SettingSaltWidth, s.SaltWidth, salt.MaxWidth)
	case s.SaltBuckets < 1:
		return fmt.Errorf("%s = %d: must be at least 1", SettingSaltBuckets, s.SaltBuckets)
	case !s.Widths.Valid():
		return fmt.Errorf("tsd.storage.uid.width.*: %d/%d/%d: each must be 1..8", s.Widths.Metric, s.Widths.TagK, s.Widths.TagV)
	}
	return nil
}
