package annotation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
)

// found is one annotation cell met by a range walk. Row and Qualifier are
// only valid during the callback.
type found struct {
	row, q []byte
	t      int64 // start time in ms, from the row's base and the qualifier
	value  []byte
}

// annotationQualifiers keeps the qualifiers that start with 01; a few data
// point qualifiers do too, and Classify drops them.
var annotationQualifiers = storage.ReadOptions{QualifierStart: []byte{0x01}, QualifierStop: []byte{0x02}}

// Range returns the annotations of tsuid (nil or empty: the global ones)
// whose start time is in [startMs, endMs], sorted by start time. A cell
// that does not decode is skipped and counted (Corrupt).
func (s *Store) Range(ctx context.Context, tsuid []byte, startMs, endMs int64) ([]Annotation, error) {
	type note struct {
		t int64
		a Annotation
	}
	var notes []note
	err := s.walk(ctx, tsuid, startMs, endMs, func(f *found) error {
		a, err := Decode(f.value)
		if err != nil {
			s.corrupt.Add(1)
			return nil
		}
		notes = append(notes, note{f.t, a})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(notes, func(x, y note) int { return cmpInt(x.t, y.t) })
	out := make([]Annotation, len(notes))
	for i := range notes {
		out[i] = notes[i].a
	}
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DeleteRange removes the annotations of tsuid (nil or empty: the global
// ones) whose start time is in [startMs, endMs] and returns how many it
// removed. The range end is required (>= 1), as in OpenTSDB.
func (s *Store) DeleteRange(ctx context.Context, tsuid []byte, startMs, endMs int64) (int, error) {
	var muts []storage.Mutation
	err := s.walk(ctx, tsuid, startMs, endMs, func(f *found) error {
		del := storage.Deletion{Kind: storage.DeleteColumn, Family: s.opts.Family, Qualifier: bytes.Clone(f.q)}
		if n := len(muts); n > 0 && bytes.Equal(muts[n-1].Row, f.row) {
			muts[n-1].Deletes = append(muts[n-1].Deletes, del)
			return nil
		}
		muts = append(muts, storage.Mutation{Row: bytes.Clone(f.row), Deletes: []storage.Deletion{del}})
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range muts {
		n += len(m.Deletes)
	}
	if len(muts) > 0 {
		if err := s.t.Apply(ctx, muts); err != nil {
			return 0, fmt.Errorf("annotation: delete range: %w", err)
		}
	}
	return n, nil
}

// checkRange validates a range in ms.
func checkRange(startMs, endMs int64) error {
	switch {
	case endMs < 1:
		return ErrNoEndTime
	case endMs < startMs:
		return ErrEndBeforeStart
	case startMs > rowkey.MaxTimestamp:
		return invalidf("start time %d ms is past the last storable time", startMs)
	}
	return nil
}

// walk calls fn for every annotation cell of tsuid (or the global row)
// whose start is in [startMs, endMs].
func (s *Store) walk(ctx context.Context, tsuid []byte, startMs, endMs int64, fn func(*found) error) error {
	if err := checkRange(startMs, endMs); err != nil {
		return err
	}
	startMs = max(startMs, 0)
	endMs = min(endMs, rowkey.MaxTimestamp)
	if len(tsuid) == 0 {
		first := s.l.AppendGlobalAnnotationRowKey(nil, startMs)
		last := s.l.AppendGlobalAnnotationRowKey(nil, endMs)
		return s.scan(ctx, first, last, len(first), nil, startMs, endMs, fn)
	}
	if _, _, err := s.l.ParseTSUID(tsuid); err != nil {
		return invalidf("%v", err)
	}
	hours := (rowkey.BaseTime(endMs)-rowkey.BaseTime(startMs))/rowkey.RowSpan + 1
	if hours <= int64(s.opts.MaxGets) {
		return s.getHours(ctx, tsuid, startMs, endMs, fn)
	}
	first, _ := s.l.AppendRowKeyFromTSUID(nil, tsuid, startMs)
	last, _ := s.l.AppendRowKeyFromTSUID(nil, tsuid, endMs)
	return s.scan(ctx, first, last, len(first), tsuid, startMs, endMs, fn)
}

// getHours reads each hour row of the range with a Get.
func (s *Store) getHours(ctx context.Context, tsuid []byte, startMs, endMs int64, fn func(*found) error) error {
	ro := annotationQualifiers
	ro.Families = []string{s.opts.Family}
	var key []byte
	for h := rowkey.BaseTime(startMs); h <= rowkey.BaseTime(endMs); h += rowkey.RowSpan {
		key, _ = s.l.AppendRowKeyFromTSUID(key[:0], tsuid, h*1000)
		cells, err := s.t.Get(ctx, key, &ro)
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("annotation: get row: %w", err)
		}
		for i := range cells {
			if err := visit(key, h, &cells[i], startMs, endMs, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// scan reads the rows from first to last inclusive, keeping those of
// exactly keyLen bytes whose TSUID is tsuid (nil: the zero-metric rows).
func (s *Store) scan(ctx context.Context, first, last []byte, keyLen int, tsuid []byte, startMs, endMs int64, fn func(*found) error) error {
	opts := &storage.ScanOptions{Start: first, Stop: append(bytes.Clone(last), 0), ReadOptions: annotationQualifiers}
	opts.Families = []string{s.opts.Family}
	sc := s.t.Scan(ctx, opts)
	defer sc.Close()
	for sc.Next() {
		row := sc.Row()
		if len(row.Key) != keyLen || !s.sameSeries(row.Key, tsuid) {
			continue
		}
		base := s.baseOf(row.Key)
		for i := range row.Cells {
			if err := visit(row.Key, base, &row.Cells[i], startMs, endMs, fn); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("annotation: scan: %w", err)
	}
	return nil
}

// sameSeries reports whether row belongs to tsuid (nil: the zero metric).
func (s *Store) sameSeries(row, tsuid []byte) bool {
	w, m := s.l.Salt.Width(), s.l.Widths.Metric
	if tsuid == nil {
		return isZero(row[:w+m])
	}
	pre := w + m + rowkey.TimestampBytes
	return bytes.Equal(row[w:w+m], tsuid[:m]) && bytes.Equal(row[pre:], tsuid[m:])
}

// baseOf reads a row key's base time in seconds.
func (s *Store) baseOf(row []byte) int64 {
	at := s.l.Salt.Width() + s.l.Widths.Metric
	b := row[at : at+rowkey.TimestampBytes]
	return int64(b[0])<<24 | int64(b[1])<<16 | int64(b[2])<<8 | int64(b[3])
}

// visit calls fn for c when it is an annotation cell in the range.
func visit(row []byte, base int64, c *storage.Cell, startMs, endMs int64, fn func(*found) error) error {
	if rowkey.Classify(c.Qualifier) != rowkey.ColumnAnnotation {
		return nil
	}
	off, err := rowkey.ParseAnnotationQualifier(c.Qualifier)
	if err != nil {
		return nil
	}
	t := base*1000 + off
	if t < startMs || t > endMs {
		return nil
	}
	return fn(&found{row: row, q: c.Qualifier, t: t, value: c.Value})
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, storage.ErrNotFound) }
