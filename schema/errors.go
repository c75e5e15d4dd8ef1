package schema

import (
	"errors"
	"fmt"
)

// Error classes; test with errors.Is.
var (
	// ErrSettingMismatch: configured settings differ from the recorded ones.
	ErrSettingMismatch = errors.New("schema: settings differ from the store's record")
	// ErrUnrecordedOpenTSDB: the store holds OpenTSDB data but no tsd record,
	// and the settings that must match it were not given explicitly.
	ErrUnrecordedOpenTSDB = errors.New("schema: OpenTSDB data without a tsd record")
)

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
