package schema

import (
	"strings"
	"testing"

	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

func TestDefaultSettings(t *testing.T) {
	s := DefaultSettings()
	if s.Format != FormatDense || s.SaltWidth != salt.DefaultWidth || s.SaltBuckets != salt.DefaultBuckets ||
		s.Widths != series.DefaultWidths() || s.Given != 0 {
		t.Errorf("DefaultSettings = %+v", s)
	}
	sl, err := s.Salt()
	if err != nil || sl != salt.Default() {
		t.Errorf("default salt %v %v, want %v", sl, err, salt.Default())
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
}

func TestSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Format = 7 }, "tsd.storage.format: unknown format 7"},
		{func(s *Settings) { s.SaltWidth = 9 }, "tsd.storage.salt.width = 9: must be 0..8"},
		{func(s *Settings) { s.SaltBuckets = 0 }, "tsd.storage.salt.buckets = 0: must be at least 1"},
		{func(s *Settings) { s.Widths.TagK = 0 }, "tsd.storage.uid.width.*: 3/0/3: each must be 1..8"},
	} {
		s := DefaultSettings()
		tc.edit(&s)
		if err := s.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}

func TestSettingEach(t *testing.T) {
	if got := AllSettings.Each(); len(got) != 6 || got[0] != SettingFormat || got[5] != SettingWidthTagV {
		t.Errorf("AllSettings.Each() = %v", got)
	}
	set := SettingSaltBuckets | SettingFormat
	if got := set.String(); got != "tsd.storage.format, tsd.storage.salt.buckets" {
		t.Errorf("String of a set = %q", got)
	}
	for _, one := range AllSettings.Each() {
		if q := one.qualifier(); strings.HasPrefix(q, "tsd.") || q == "" {
			t.Errorf("qualifier of %s = %q", one, q)
		}
	}
}

func TestTableSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec storage.TableSpec
		fams []string
	}{
		{MetaTableSpec(DefaultMetaTable), []string{MetaFamilyRecord, MetaFamilyIndex, MetaFamilyCompaction, MetaFamilyTSMeta}},
		{DataTableSpec(DefaultDataTable), []string{DataFamily}},
	} {
		if err := storage.ValidateTableSpec(tc.spec); err != nil {
			t.Fatal(err)
		}
		if len(tc.spec.Families) != len(tc.fams) {
			t.Errorf("%s: families %+v", tc.spec.Name, tc.spec.Families)
		}
		for _, f := range tc.fams {
			if fs, ok := tc.spec.Family(f); !ok || fs.MaxVersions != 1 || fs.TTL != 0 {
				t.Errorf("%s family %q: %+v %v", tc.spec.Name, f, fs, ok)
			}
		}
	}
}
