package tsmeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// ErrNoChange: an update named no field that differs from its default
// (OpenTSDB's "No changes detected in TSUID meta data", HTTP 304).
var ErrNoChange = errors.New("No changes detected in TSUID meta data")

// Qualifiers of family m.
var (
	qualMeta    = []byte("ts_meta")
	qualCounter = []byte("ts_ctr")
	// qualWriterCounter ‖ 4-byte writer id: one daemon's point count.
	qualWriterCounter = []byte("ts_ctr.")
	qualLast          = []byte("ts_last")
	qualCreated       = []byte("ts_created")
)

// createdLimit bounds creation times (seconds): ts_created is stamped
// (createdLimit − s) ms, so the earliest creation has the newest stamp.
const createdLimit = 1 << 40

var readAll = &storage.ReadOptions{Families: []string{schema.MetaFamilyTSMeta}}

// Meta is one series' TSMeta without its UIDMeta (the caller adds names).
type Meta struct {
	// TSUID is the series' TSUID bytes.
	TSUID []byte
	// Stored says a ts_meta cell exists (the user wrote fields, or an
	// OpenTSDB-style create=true made one).
	Stored bool
	Fields
	// Created is when the series was created, Unix s; 0 when unknown.
	Created int64
	// LastReceived is when its latest tracked point arrived, Unix s.
	LastReceived int64
	// TotalDatapoints counts its tracked points.
	TotalDatapoints int64
}

// Fields are the user-writable fields of a TSMeta.
type Fields struct {
	DisplayName, Description, Notes, Units, DataType string
	// Custom holds user key/value pairs; nil when there are none.
	Custom    map[string]string
	Retention int
	// Max and Min are NaN when not set.
	Max, Min float64
}

// DefaultFields returns the fields of a TSMeta nobody wrote.
func DefaultFields() Fields { return Fields{Max: math.NaN(), Min: math.NaN()} }

// Update names the fields an update changes; nil fields are left alone,
// unless the update overwrites (HTTP PUT), which resets them.
type Update struct {
	DisplayName, Description, Notes, Units, DataType *string
	// Custom replaces the custom map when CustomSet.
	Custom    map[string]string
	CustomSet bool
	Retention *int
	Max, Min  *float64
}

// changes reports whether u sets some field to other than its default,
// as OpenTSDB's setters mark a field changed only then (a given NaN
// counts, as NaN != NaN in Java).
func (u *Update) changes() bool {
	str := func(p *string) bool { return p != nil && *p != "" }
	// max and min start as NaN, and NaN differs from every value.
	flt := func(p *float64) bool { return p != nil }
	return str(u.DisplayName) || str(u.Description) || str(u.Notes) || str(u.Units) || str(u.DataType) ||
		(u.CustomSet && u.Custom != nil) || (u.Retention != nil && *u.Retention != 0) || flt(u.Max) || flt(u.Min)
}

// apply merges u into f: POST keeps what u does not name, PUT (overwrite)
// resets it.
func (u *Update) apply(f *Fields, overwrite bool) {
	def := DefaultFields()
	if overwrite {
		custom := f.Custom
		*f = def
		f.Custom = custom
		if !u.CustomSet {
			f.Custom = nil
		}
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&f.DisplayName, u.DisplayName)
	set(&f.Description, u.Description)
	set(&f.Notes, u.Notes)
	set(&f.Units, u.Units)
	set(&f.DataType, u.DataType)
	if u.CustomSet {
		f.Custom = u.Custom
	}
	if u.Retention != nil {
		f.Retention = *u.Retention
	}
	if u.Max != nil {
		f.Max = *u.Max
	}
	if u.Min != nil {
		f.Min = *u.Min
	}
}

// Store reads and writes TSMeta rows in the meta table. It is safe for
// concurrent use and owns no goroutine.
type Store struct {
	t storage.Table
}

// New returns a Store on the meta table, which must have family m
// (schema.MetaTableSpec).
func New(meta storage.Table) (*Store, error) {
	if err := storage.ValidateFamily(meta.Spec(), schema.MetaFamilyTSMeta); err != nil {
		return nil, fmt.Errorf("tsmeta: meta table: %w", err)
	}
	return &Store{t: meta}, nil
}

// AppendRow appends the row key of tsuid's TSMeta.
func AppendRow(dst, tsuid []byte) []byte {
	return append(append(dst, schema.MetaTSMetaPrefix...), tsuid...)
}

// Get returns the TSMeta of tsuid: stored fields and counters, defaults
// where nothing is stored.
func (s *Store) Get(ctx context.Context, tsuid []byte) (Meta, error) {
	m, _, err := s.read(ctx, tsuid)
	return m, err
}

// read returns the meta and the raw ts_meta cell (nil when absent).
func (s *Store) read(ctx context.Context, tsuid []byte) (Meta, []byte, error) {
	m := Meta{TSUID: tsuid, Fields: DefaultFields()}
	row := AppendRow(nil, tsuid)
	cells, err := s.t.Get(ctx, row, readAll)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return m, nil, fmt.Errorf("tsmeta %X: %w", tsuid, err)
	}
	var raw []byte
	var marked, counted int64
	for _, c := range cells {
		switch string(c.Qualifier) {
		case string(qualMeta):
			raw = c.Value
		case string(qualCounter):
			marked = be64(c.Value)
		case string(qualLast):
			m.LastReceived = be64(c.Value) / 1000
		case string(qualCreated):
			m.Created = be64(c.Value)
		default:
			if bytes.HasPrefix(c.Qualifier, qualWriterCounter) {
				counted += be64(c.Value)
			}
		}
	}
	// The daemons' counts when any daemon counts, else the mark.
	m.TotalDatapoints = marked
	if counted > 0 {
		m.TotalDatapoints = counted
	}
	if raw != nil {
		created, err := decodeFields(&m.Fields, raw)
		if err != nil {
			return m, raw, &storage.CorruptionError{Table: s.t.Spec().Name, Row: row, Qualifier: qualMeta, Err: err}
		}
		m.Stored = true
		if m.Created == 0 || (created > 0 && created < m.Created) {
			m.Created = created
		}
	}
	return m, raw, nil
}

func be64(b []byte) int64 {
	if len(b) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// casAttempts bounds Update's read-merge-write loop against writers that
// keep changing the cell.
const casAttempts = 5

// Update applies upd to the TSMeta of tsuid and returns the result
// (OpenTSDB's TSMeta.syncToStorage): POST changes the named fields, PUT
// (overwrite) resets the others. An update that changes nothing is
// ErrNoChange. The caller checks the series exists.
func (s *Store) Update(ctx context.Context, tsuid []byte, upd *Update, overwrite bool) (Meta, error) {
	if !upd.changes() {
		return Meta{}, ErrNoChange
	}
	for attempt := 1; ; attempt++ {
		m, raw, err := s.read(ctx, tsuid)
		if err != nil {
			return m, err
		}
		upd.apply(&m.Fields, overwrite)
		v := appendStorageJSON(nil, tsuid, &m.Fields, m.Created)
		cell := storage.Cell{Family: schema.MetaFamilyTSMeta, Qualifier: qualMeta, Value: v}
		err = s.t.CheckAndPut(ctx, AppendRow(nil, tsuid), schema.MetaFamilyTSMeta, qualMeta, raw, []storage.Cell{cell})
		if err == nil {
			m.Stored = true
			return m, nil
		}
		if !errors.Is(err, storage.ErrConflict) || attempt >= casAttempts {
			return m, fmt.Errorf("tsmeta %X: %w", tsuid, err)
		}
	}
}

// Create stores default fields for tsuid unless some are stored
// (OpenTSDB's create=true), and reports whether it wrote them.
func (s *Store) Create(ctx context.Context, tsuid []byte, created int64) (bool, error) {
	f := DefaultFields()
	v := appendStorageJSON(nil, tsuid, &f, created)
	cell := storage.Cell{Family: schema.MetaFamilyTSMeta, Qualifier: qualMeta, Value: v}
	err := s.t.CheckAndPut(ctx, AppendRow(nil, tsuid), schema.MetaFamilyTSMeta, qualMeta, nil, []storage.Cell{cell})
	if errors.Is(err, storage.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the user's fields of tsuid (OpenTSDB deletes the ts_meta
// cell only); the tracked counters stay.
func (s *Store) Delete(ctx context.Context, tsuid []byte) error {
	err := s.t.Delete(ctx, AppendRow(nil, tsuid),
		storage.Deletion{Kind: storage.DeleteColumn, Family: schema.MetaFamilyTSMeta, Qualifier: qualMeta})
	if err != nil {
		return fmt.Errorf("tsmeta %X: delete: %w", tsuid, err)
	}
	return nil
}
