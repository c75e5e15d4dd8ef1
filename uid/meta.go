package uid

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// DefaultMetaTable is tsd's own table (tsd.storage.hbase.meta_table).
const DefaultMetaTable = "tsdb-meta"

// Families of the meta table; doc.go gives their rows.
const (
	// MetaFamilyRecord holds the settings record.
	MetaFamilyRecord = "r"
	// MetaFamilyIndex is reserved for the series index and its series-id
	// counter (package uid/index).
	MetaFamilyIndex = "x"
	// MetaFamilyCompaction is reserved for the rows awaiting compaction
	// (the write path).
	MetaFamilyCompaction = "q"
)

// Row keys and prefixes of the meta table. Callers must not modify them.
var (
	// MetaRecordRow is the settings record's row.
	MetaRecordRow = []byte("\x00record")
	// MetaSeriesIDRow is the series-id counter's row (family x, qualifier
	// "max", 8-byte big-endian, like MAXID).
	MetaSeriesIDRow = []byte("\x00series_id")
	// MetaIndexPrefix starts every series-index row (family x).
	MetaIndexPrefix = []byte{0x01}
	// MetaCompactionPrefix starts every row-awaiting-compaction row
	// (family q): the prefix then the data row key.
	MetaCompactionPrefix = []byte{0x02}
)

// MetaTableSpec returns the meta table's layout: families r, x and q, one
// version each, no TTL.
func MetaTableSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{
		{Name: MetaFamilyRecord, MaxVersions: 1},
		{Name: MetaFamilyIndex, MaxVersions: 1},
		{Name: MetaFamilyCompaction, MaxVersions: 1},
	}}
}

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

// String returns the configuration key of a single setting.
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
	for _, one := range settingList {
		if s&one != 0 {
			keys = append(keys, one.String())
		}
	}
	return strings.Join(keys, ", ")
}

// qualifier is the setting's column in the record.
func (s Setting) qualifier() string {
	return strings.TrimPrefix(s.String(), "tsd.storage.")
}

// Default settings for a new store.
const (
	DefaultSaltWidth   = 1
	DefaultSaltBuckets = 20
)

// Settings are the table-wide choices recorded in the meta table. They
// never change once data exists.
type Settings struct {
	// Format is the write format. Default FormatDense.
	Format Format
	// SaltWidth is the salt prefix width in bytes, 0..8. Default 1.
	SaltWidth int
	// SaltBuckets is the number of salt buckets, >= 1. Default 20.
	SaltBuckets int
	// Widths are the UID widths. Default 3 each.
	Widths series.Widths
	// Given marks the settings the operator set explicitly. A setting not
	// in Given is ignored here: it takes the record's value, or its default
	// in a new store. A given setting that differs from the record is an
	// error.
	Given Setting
}

// DefaultSettings returns the settings of a new store, none given.
func DefaultSettings() Settings {
	return Settings{Format: FormatDense, SaltWidth: DefaultSaltWidth, SaltBuckets: DefaultSaltBuckets,
		Widths: series.DefaultWidths()}
}

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
	case s.Format != FormatDense && s.Format != FormatOpenTSDB:
		return fmt.Errorf("%s: unknown format %d", SettingFormat, s.Format)
	case s.SaltWidth < 0 || s.SaltWidth > 8:
		return fmt.Errorf("%s = %d: must be 0..8", SettingSaltWidth, s.SaltWidth)
	case s.SaltBuckets < 1:
		return fmt.Errorf("%s = %d: must be at least 1", SettingSaltBuckets, s.SaltBuckets)
	case !s.Widths.Valid():
		return fmt.Errorf("tsd.storage.uid.width.*: %d/%d/%d: each must be 1..8", s.Widths.Metric, s.Widths.TagK, s.Widths.TagV)
	}
	return nil
}

// SettingError names a setting whose given value differs from the record.
type SettingError struct {
	// Setting is the one that differs.
	Setting Setting
	// Table is the meta table holding the record.
	Table string
	// Recorded and Wanted are the record's and the configured values.
	Recorded, Wanted string
}

// Error names the setting and both values.
func (e *SettingError) Error() string {
	return fmt.Sprintf("%s is %s in the record of table %q but %s was configured; it cannot change once data exists",
		e.Setting, e.Recorded, e.Table, e.Wanted)
}

// Is makes errors.Is(err, ErrSettingMismatch) hold.
func (e *SettingError) Is(target error) bool { return target == ErrSettingMismatch }

// ReadRecord returns the settings recorded in the meta table (Given is
// AllSettings) and whether there is a record. A partial or unparsable
// record is a *storage.CorruptionError.
func ReadRecord(ctx context.Context, meta storage.Table) (Settings, bool, error) {
	cells, err := meta.Get(ctx, MetaRecordRow, &storage.ReadOptions{Families: []string{MetaFamilyRecord}})
	if errors.Is(err, storage.ErrNotFound) {
		return Settings{}, false, nil
	}
	if err != nil {
		return Settings{}, false, fmt.Errorf("read settings record: %w", err)
	}
	s := Settings{Given: AllSettings}
	for _, one := range settingList {
		v, ok := findCell(cells, one.qualifier())
		if !ok {
			err = fmt.Errorf("record has no %s", one)
		} else {
			err = s.set(one, v)
		}
		if err != nil {
			return Settings{}, true, &storage.CorruptionError{Table: meta.Spec().Name, Row: MetaRecordRow, Qualifier: []byte(one.qualifier()), Err: err}
		}
	}
	return s, true, nil
}

func findCell(cells []storage.Cell, qual string) (string, bool) {
	for _, c := range cells {
		if string(c.Qualifier) == qual {
			return string(c.Value), true
		}
	}
	return "", false
}

// CheckRecord returns the settings a daemon must run with, writing nothing:
// the record's values, after checking that every setting in want.Given
// equals them. With no record it returns want with defaults for the
// settings not given, unless uidTbl holds OpenTSDB data (a MAXID row): then
// the format (as opentsdb) and both salt settings must be given, or the
// error is ErrUnrecordedOpenTSDB. exists reports whether a record exists.
func CheckRecord(ctx context.Context, meta, uidTbl storage.Table, want Settings) (s Settings, exists bool, err error) {
	rec, exists, err := ReadRecord(ctx, meta)
	if err != nil {
		return Settings{}, exists, err
	}
	if exists {
		s, err = reconcile(rec, want, meta.Spec().Name)
		return s, true, err
	}
	s = withDefaults(want)
	if err := s.Validate(); err != nil {
		return Settings{}, false, err
	}
	return s, false, checkOpenTSDBData(ctx, uidTbl, meta.Spec().Name, s)
}

// EnsureRecord is CheckRecord that also records the settings of a store
// that has no record yet. Two daemons starting at once agree: the record is
// created with a check-and-put, and the loser checks against the winner's.
func EnsureRecord(ctx context.Context, meta, uidTbl storage.Table, want Settings) (Settings, error) {
	s, exists, err := CheckRecord(ctx, meta, uidTbl, want)
	if err != nil || exists {
		return s, err
	}
	err = WriteRecord(ctx, meta, s)
	if errors.Is(err, storage.ErrConflict) {
		s, _, err = CheckRecord(ctx, meta, uidTbl, want)
		return s, err
	}
	if err != nil {
		return Settings{}, fmt.Errorf("write settings record: %w", err)
	}
	s.Given = AllSettings
	return s, nil
}

// WriteRecord records s as the store's settings where no record exists (a
// record is never overwritten: storage.ErrConflict). EnsureRecord uses it
// for a new store; a store repair uses it to write back a record the
// repair lost.
func WriteRecord(ctx context.Context, meta storage.Table, s Settings) error {
	cells := make([]storage.Cell, 0, len(settingList)+1)
	cells = append(cells, storage.Cell{Family: MetaFamilyRecord, Qualifier: []byte("version"), Value: []byte("1")})
	for _, one := range settingList {
		cells = append(cells, storage.Cell{Family: MetaFamilyRecord, Qualifier: []byte(one.qualifier()), Value: []byte(s.value(one))})
	}
	return meta.CheckAndPut(ctx, MetaRecordRow, MetaFamilyRecord, []byte("version"), nil, cells)
}

// reconcile checks want's given settings against the record.
func reconcile(rec, want Settings, table string) (Settings, error) {
	for _, one := range settingList {
		if want.Given&one == 0 {
			continue
		}
		if r, w := rec.value(one), want.value(one); r != w {
			return Settings{}, &SettingError{Setting: one, Table: table, Recorded: r, Wanted: w}
		}
	}
	return rec, nil
}

func withDefaults(want Settings) Settings {
	s := DefaultSettings()
	for _, one := range settingList {
		if want.Given&one != 0 {
			_ = s.set(one, want.value(one))
		}
	}
	s.Given = want.Given
	return s
}

// openTSDBRequired are the settings an unrecorded OpenTSDB store needs.
const openTSDBRequired = SettingFormat | SettingSaltWidth | SettingSaltBuckets

// checkOpenTSDBData refuses to adopt an OpenTSDB store on guessed settings.
func checkOpenTSDBData(ctx context.Context, uidTbl storage.Table, metaName string, s Settings) error {
	if uidTbl == nil {
		return nil
	}
	has, err := hasMaxIDRow(ctx, uidTbl)
	if err != nil || !has {
		return err
	}
	uidName := uidTbl.Spec().Name
	if missing := openTSDBRequired &^ s.Given; missing != 0 {
		return fmt.Errorf("%w: table %q holds OpenTSDB data (a MAXID row) but %q has no tsd record; "+
			"set tsd.storage.format=opentsdb and the salt settings of the OpenTSDB daemons explicitly (missing: %s)",
			ErrUnrecordedOpenTSDB, uidName, metaName, missing)
	}
	if s.Format != FormatOpenTSDB {
		return fmt.Errorf("%w: table %q holds OpenTSDB data (a MAXID row) but %q has no tsd record; "+
			"such a store needs tsd.storage.format=opentsdb, not %s", ErrUnrecordedOpenTSDB, uidName, metaName, s.Format)
	}
	return nil
}

func hasMaxIDRow(ctx context.Context, uidTbl storage.Table) (bool, error) {
	cells, err := uidTbl.Get(ctx, MaxIDRow, &storage.ReadOptions{Families: famIDs})
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for a MAXID row in %q: %w", uidTbl.Spec().Name, err)
	}
	return len(cells) > 0, nil
}
