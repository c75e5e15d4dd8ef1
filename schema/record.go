package schema

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// OpenTSDBProbe reports whether a store that has no record already holds
// data an OpenTSDB daemon wrote, and names the table where it looked. The
// evidence is in the UID table, whose layout package uid owns: its
// MaxIDProbe looks for the MAXID row. A nil probe finds nothing.
type OpenTSDBProbe func(ctx context.Context) (table string, found bool, err error)

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
// settings not given, unless probe finds OpenTSDB data: then the format (as
// opentsdb) and both salt settings must be given, or the error is
// ErrUnrecordedOpenTSDB. exists reports whether a record exists.
func CheckRecord(ctx context.Context, meta storage.Table, probe OpenTSDBProbe, want Settings) (s Settings, exists bool, err error) {
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
	return s, false, checkOpenTSDBData(ctx, probe, meta.Spec().Name, s)
}

// EnsureRecord is CheckRecord that also records the settings of a store
// that has no record yet. Two daemons starting at once agree: the record is
// created with a check-and-put, and the loser checks against the winner's.
func EnsureRecord(ctx context.Context, meta storage.Table, probe OpenTSDBProbe, want Settings) (Settings, error) {
	s, exists, err := CheckRecord(ctx, meta, probe, want)
	if err != nil || exists {
		return s, err
	}
	err = WriteRecord(ctx, meta, s)
	if errors.Is(err, storage.ErrConflict) {
		s, _, err = CheckRecord(ctx, meta, probe, want)
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
	cells = append(cells, storage.Cell{Family: MetaFamilyRecord, Qualifier: []byte(recordVersionQualifier), Value: []byte(recordVersion)})
	for _, one := range settingList {
		cells = append(cells, storage.Cell{Family: MetaFamilyRecord, Qualifier: []byte(one.qualifier()), Value: []byte(s.value(one))})
	}
	return meta.CheckAndPut(ctx, MetaRecordRow, MetaFamilyRecord, []byte(recordVersionQualifier), nil, cells)
}

// The record's version cell: written first of the record, the column a
// second daemon's check-and-put expects absent.
const (
	recordVersionQualifier = "version"
	recordVersion          = "1"
)

// reconcile checks want's given settings against the record.
func reconcile(rec, want Settings, table string) (Settings, error) {
	for _, one := range want.Given.Each() {
		if r, w := rec.value(one), want.value(one); r != w {
			return Settings{}, &SettingError{Setting: one, Table: table, Recorded: r, Wanted: w}
		}
	}
	return rec, nil
}

// withDefaults returns the defaults overridden by want's given settings.
func withDefaults(want Settings) Settings {
	s := DefaultSettings()
	for _, one := range want.Given.Each() {
		_ = s.set(one, want.value(one))
	}
	s.Given = want.Given
	return s
}

// openTSDBRequired are the settings an unrecorded OpenTSDB store needs.
const openTSDBRequired = SettingFormat | SettingSaltWidth | SettingSaltBuckets

// checkOpenTSDBData refuses to adopt an OpenTSDB store on guessed settings.
func checkOpenTSDBData(ctx context.Context, probe OpenTSDBProbe, metaName string, s Settings) error {
	if probe == nil {
		return nil
	}
	uidName, has, err := probe(ctx)
	if err != nil || !has {
		return err
	}
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
