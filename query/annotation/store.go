package annotation

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// DefaultFamily is the data table's one family, OpenTSDB's "t".
const DefaultFamily = "t"

// maxCASAttempts bounds Put's read-merge-CheckAndPut loop.
const maxCASAttempts = 8

// Options configure a Store.
type Options struct {
	// Table is the data table. Required.
	Table storage.Table
	// Layout is the table's key layout (UID widths, salt). Required.
	Layout *rowkey.Layout
	// Family is the column family. Default "t".
	Family string
	// MaxGets is the most hour rows a one-series Range reads with a Get
	// each; a longer range scans the series' bucket instead. Default 48.
	MaxGets int
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Family == "" {
		o.Family = DefaultFamily
	}
	if o.MaxGets == 0 {
		o.MaxGets = 48
	}
	return o
}

// Validate reports the first missing or invalid field.
func (o *Options) Validate() error {
	switch {
	case o.Table == nil:
		return errors.New("annotation: Options.Table is nil")
	case o.Layout == nil:
		return errors.New("annotation: Options.Layout is nil")
	case o.MaxGets < 0:
		return fmt.Errorf("annotation: Options.MaxGets %d is negative", o.MaxGets)
	}
	return o.Layout.Validate()
}

// Store reads and writes annotations in the data table. It is safe for
// concurrent use.
type Store struct {
	opts    Options
	t       storage.Table
	l       *rowkey.Layout
	corrupt atomic.Int64
}

// NewStore returns a Store after EnsureDefaults and Validate.
func NewStore(opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Store{opts: opts, t: opts.Table, l: opts.Layout}, nil
}

// Corrupt returns how many stored cells did not decode since the Store
// was made (they are skipped).
func (s *Store) Corrupt() int64 { return s.corrupt.Load() }

// ParseTSUID decodes a hex TSUID ("" is global: nil) and checks it against
// the layout.
func (s *Store) ParseTSUID(hex string) ([]byte, error) {
	if hex == "" {
		return nil, nil
	}
	b, err := rowkey.AppendParseTSUIDHex(nil, hex)
	if err == nil {
		_, _, err = s.l.ParseTSUID(b)
	}
	if err != nil {
		return nil, invalidf("Invalid TSUID %q: %v", hex, err)
	}
	return b, nil
}

// AppendCell appends the row key and then the qualifier of the annotation
// of tsuid (nil: global) starting at start (s or ms), and returns the
// combined slice and where the qualifier begins.
func (s *Store) AppendCell(dst, tsuid []byte, start int64) (out []byte, qualAt int, err error) {
	ms, err := checkStart(start)
	if err != nil {
		return dst, 0, err
	}
	if len(tsuid) == 0 {
		dst = s.l.AppendGlobalAnnotationRowKey(dst, ms)
	} else if dst, err = s.l.AppendRowKeyFromTSUID(dst, tsuid, ms); err != nil {
		return dst, 0, invalidf("%v", err)
	}
	qualAt = len(dst)
	dst, err = appendQualifier(dst, start)
	return dst, qualAt, err
}

// appendQualifier appends 01 + the offset in the unit of start.
func appendQualifier(dst []byte, start int64) ([]byte, error) {
	ms := ToMs(start)
	off := ms - rowkey.BaseTime(ms)*1000
	if IsMs(start) {
		return binary.BigEndian.AppendUint32(append(dst, 0x01), uint32(off)), nil
	}
	return rowkey.AppendAnnotationQualifier(dst, off)
}

// getRaw returns the stored cell value (non-nil when present) or nil.
func (s *Store) getRaw(ctx context.Context, row, q []byte) ([]byte, error) {
	cells, err := s.t.Get(ctx, row, &storage.ReadOptions{
		Families: []string{s.opts.Family}, Qualifiers: [][]byte{q}, MaxVersions: 1})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && len(cells) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("annotation: get: %w", err)
	}
	if cells[0].Value == nil {
		return []byte{}, nil
	}
	return cells[0].Value, nil
}

// Get returns the annotation of tsuid (nil: global) starting at start
// (seconds or ms, as stored), or ErrNotFound.
func (s *Store) Get(ctx context.Context, tsuid []byte, start int64) (Annotation, error) {
	key, qa, err := s.AppendCell(nil, tsuid, start)
	if err != nil {
		return Annotation{}, err
	}
	raw, err := s.getRaw(ctx, key[:qa], key[qa:])
	if err != nil {
		return Annotation{}, err
	}
	if raw == nil {
		return Annotation{}, ErrNotFound
	}
	a, err := Decode(raw)
	if err != nil {
		s.corrupt.Add(1)
		return Annotation{}, corruption(s, key[:qa], key[qa:], err)
	}
	return a, nil
}

func corruption(s *Store, row, q []byte, err error) error {
	return &storage.CorruptionError{Table: s.t.Spec().Name, Row: row, Qualifier: q, Err: err}
}

// Put writes a, merged with the stored annotation at the same cell as
// OpenTSDB's syncToStorage does (see the package doc), and returns what it
// stored. overwrite (HTTP PUT) replaces every mutable field instead of
// keeping the stored ones the caller did not set.
func (s *Store) Put(ctx context.Context, a *Annotation, overwrite bool) (Annotation, error) {
	if a.StartTime < 1 {
		return Annotation{}, ErrNoStartTime
	}
	if a.Given == 0 {
		return Annotation{}, ErrNoChanges
	}
	tsuid, err := s.ParseTSUID(a.TSUID)
	if err != nil {
		return Annotation{}, err
	}
	key, qa, err := s.AppendCell(nil, tsuid, a.StartTime)
	if err != nil {
		return Annotation{}, err
	}
	for range maxCASAttempts {
		merged, err := s.tryPut(ctx, key[:qa], key[qa:], a, overwrite)
		if !errors.Is(err, storage.ErrConflict) {
			return merged, err
		}
	}
	return Annotation{}, ErrConflict
}

// tryPut is one read-merge-CheckAndPut round.
func (s *Store) tryPut(ctx context.Context, row, q []byte, a *Annotation, overwrite bool) (Annotation, error) {
	old, err := s.getRaw(ctx, row, q)
	if err != nil {
		return Annotation{}, err
	}
	merged := *a
	if old != nil {
		stored, err := Decode(old)
		if err != nil {
			s.corrupt.Add(1) // a damaged cell is replaced, as a fresh note
		} else {
			merged.merge(&stored, overwrite)
		}
	}
	merged.Given = 0
	val := AppendStorageJSON(nil, &merged)
	err = s.t.CheckAndPut(ctx, row, s.opts.Family, q, old,
		[]storage.Cell{{Family: s.opts.Family, Qualifier: q, Value: val}})
	if err != nil {
		return Annotation{}, fmt.Errorf("annotation: put: %w", err)
	}
	return merged, nil
}

// Delete removes the annotation of tsuid (nil: global) starting at start.
// Deleting a missing annotation is not an error, as in OpenTSDB.
func (s *Store) Delete(ctx context.Context, tsuid []byte, start int64) error {
	key, qa, err := s.AppendCell(nil, tsuid, start)
	if err != nil {
		return err
	}
	err = s.t.Delete(ctx, key[:qa], storage.Deletion{Kind: storage.DeleteColumn,
		Family: s.opts.Family, Qualifier: key[qa:]})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("annotation: delete: %w", err)
	}
	return nil
}
