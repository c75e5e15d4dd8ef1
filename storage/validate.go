package storage

import "fmt"

// ValidName reports whether s is a legal table or family name:
// [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 64 bytes.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case (c == '-' || c == '.') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidateTableSpec checks names, duplicate families and limits.
func ValidateTableSpec(spec TableSpec) error {
	if !ValidName(spec.Name) {
		return Invalidf("table name %q: must match [_a-zA-Z0-9][-_.a-zA-Z0-9]*", spec.Name)
	}
	if len(spec.Families) == 0 {
		return Invalidf("table %q: no column families", spec.Name)
	}
	seen := make(map[string]bool, len(spec.Families))
	for _, f := range spec.Families {
		if !ValidName(f.Name) {
			return Invalidf("table %q: family name %q: must match [_a-zA-Z0-9][-_.a-zA-Z0-9]*", spec.Name, f.Name)
		}
		if seen[f.Name] {
			return Invalidf("table %q: family %q listed twice", spec.Name, f.Name)
		}
		seen[f.Name] = true
		if f.MaxVersions < 0 || f.TTL < 0 {
			return Invalidf("table %q family %q: negative MaxVersions or TTL", spec.Name, f.Name)
		}
	}
	return nil
}

// ValidateRow checks a row key.
func ValidateRow(row []byte) error {
	if len(row) == 0 {
		return Invalidf("empty row key")
	}
	if len(row) > MaxRowKeySize {
		return Invalidf("row key of %d bytes exceeds %d", len(row), MaxRowKeySize)
	}
	return nil
}

// ValidateTimestamp checks a cell timestamp (0 means now).
func ValidateTimestamp(ts int64) error {
	if ts < 0 {
		return Invalidf("negative timestamp %d", ts)
	}
	if ts%1000 != 0 {
		return Invalidf("timestamp %d is not a whole millisecond in microseconds", ts)
	}
	return nil
}

// ValidateFamily checks that family exists in spec.
func ValidateFamily(spec TableSpec, family string) error {
	if _, ok := spec.Family(family); !ok {
		return fmt.Errorf("table %q family %q: %w", spec.Name, family, ErrNotFound)
	}
	return nil
}

// ValidateCells checks each cell's family and timestamp against spec.
func ValidateCells(spec TableSpec, cells []Cell) error {
	for i := range cells {
		if err := ValidateFamily(spec, cells[i].Family); err != nil {
			return err
		}
		if err := ValidateTimestamp(cells[i].Timestamp); err != nil {
			return fmt.Errorf("cell %d: %w", i, err)
		}
	}
	return nil
}

// ValidateDeletion checks a deletion against spec.
func ValidateDeletion(spec TableSpec, d Deletion) error {
	switch d.Kind {
	case DeleteRow:
		return nil
	case DeleteFamily, DeleteColumn:
		if err := ValidateFamily(spec, d.Family); err != nil {
			return err
		}
	default:
		return Invalidf("unknown deletion kind %d", d.Kind)
	}
	if d.MinTime < 0 || d.MaxTime < 0 || (d.MaxTime != 0 && d.MaxTime < d.MinTime) {
		return Invalidf("bad deletion time range [%d, %d)", d.MinTime, d.MaxTime)
	}
	return nil
}

// ValidateRead checks read options against spec.
func ValidateRead(spec TableSpec, o *ReadOptions) error {
	if o == nil {
		return nil
	}
	for _, f := range o.Families {
		if err := ValidateFamily(spec, f); err != nil {
			return err
		}
	}
	if o.MinTime < 0 || o.MaxTime < 0 || o.MaxVersions < 0 {
		return Invalidf("negative time bound or MaxVersions")
	}
	return nil
}

// ValidateScan checks scan options against spec: the read options, and no
// negative row limit or batch bound.
func ValidateScan(spec TableSpec, o *ScanOptions) error {
	if err := ValidateRead(spec, &o.ReadOptions); err != nil {
		return err
	}
	if o.Limit < 0 {
		return Invalidf("negative scan row limit %d", o.Limit)
	}
	if o.MaxBatchBytes < 0 {
		return Invalidf("negative scan batch bound %d", o.MaxBatchBytes)
	}
	return nil
}
