package fsck

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Kind is a kind of damage.
type Kind uint8

// The kinds, in report order (see the package doc).
const (
	BadKey Kind = iota
	BadSalt
	UnknownUID
	OrphanRow
	BadQualifier
	BadValueLength
	BadCompacted
	Duplicate
	BadDense
	MissingIndex
	IndexWithoutRows
	NumKinds
)

var kindNames = [NumKinds]string{"bad_key", "bad_salt", "unknown_uid", "orphan_row", "bad_qualifier",
	"bad_value_length", "bad_compacted", "duplicate", "bad_dense", "missing_index", "index_without_rows"}

// String returns the kind's report name.
func (k Kind) String() string { return kindNames[k] }

// DefaultExamples is Options.Examples' default.
const DefaultExamples = 5

// Options configure Check.
type Options struct {
	// Data is the data table. Required.
	Data storage.Table
	// Family is the data family. Default "t".
	Family string
	// Layout is the table's key layout (recorded widths and salt).
	Layout rowkey.Layout
	// Format is the store's format, the one a rewritten row is written in.
	Format schema.Format
	// UIDs names the UIDs of row keys. Required.
	UIDs *uid.UIDs
	// Index is the series index checked against the rows. Required.
	Index *index.Index
	// Metrics limits the check to these metric UIDs (their bytes); nil
	// checks the whole table.
	Metrics [][]byte
	// Start and End (ms, inclusive) limit the check to the rows of their
	// hours; both zero checks every hour.
	Start, End int64
	// Fix repairs what can be repaired.
	Fix bool
	// ResolveDuplicates rewrites rows with duplicates (with Fix).
	ResolveDuplicates bool
	// Examples is how many findings of each kind the report keeps.
	// Default 5.
	Examples int
	// Progress, when set, is called after each row with the rows checked.
	Progress func(rows int64)
	// Logger receives repairs that fail. Default slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Family == "" {
		o.Family = "t"
	}
	if o.Examples == 0 {
		o.Examples = DefaultExamples
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Layout.EnsureDefaults()
	return o
}

// Validate reports the first missing or bad field.
func (o *Options) Validate() error {
	switch {
	case o.Data == nil || o.UIDs == nil || o.Index == nil:
		return errors.New("fsck: Options.Data, UIDs and Index are required")
	case o.End < o.Start:
		return errors.New("fsck: End before Start")
	case o.ResolveDuplicates && !o.Fix:
		return errors.New("fsck: ResolveDuplicates needs Fix")
	}
	return o.Layout.Validate()
}

// Finding is one damaged place.
type Finding struct {
	Kind      Kind
	Row       []byte // the row key
	Qualifier []byte // the column, for a cell's damage
	Detail    string
	// Fixed says the repair was made; Unfixed why not (empty when Fix was
	// off).
	Fixed   bool
	Unfixed string
}

// String formats a finding as the report's example lines do.
func (f *Finding) String() string {
	s := "row " + hex.EncodeToString(f.Row)
	if f.Kind == IndexWithoutRows {
		s = "series " + hex.EncodeToString(f.Row)
	}
	if f.Qualifier != nil {
		s += " q=" + hex.EncodeToString(f.Qualifier)
	}
	s += ": " + f.Detail
	switch {
	case f.Fixed:
		s += " (fixed)"
	case f.Unfixed != "":
		s += " (not fixed: " + f.Unfixed + ")"
	}
	return s
}

// Report is what Check found and repaired.
type Report struct {
	Rows, Cells, Points int64
	Found               [NumKinds]int64
	Fixed               [NumKinds]int64
	Unfixed             [NumKinds]int64
	Examples            [NumKinds][]Finding
}

// Total returns the number of findings.
func (r *Report) Total() (n int64) {
	for _, c := range r.Found {
		n += c
	}
	return n
}

// TotalUnfixed returns the findings left as they were (with Fix).
func (r *Report) TotalUnfixed() (n int64) {
	for _, c := range r.Unfixed {
		n += c
	}
	return n
}

// checker is one running Check.
type checker struct {
	opts    Options
	rep     Report
	maxIDs  [uid.NumKinds]uid.ID
	uidOK   map[uidKey]Kind // NumKinds: named
	seen    *roaring.Bitmap // index series that have rows
	row     rowState
	dec     rowkey.RowDecoder
	dense   rowkey.DenseIter
	enc     rowkey.DenseEncoder
	pts     []series.Point
	unsalt  rowkey.Layout
	counted map[int64]int
}

type uidKey struct {
	kind uid.Kind
	id   uid.ID
}

// Check checks the table and the index, repairing with Options.Fix.
func Check(ctx context.Context, opts *Options) (*Report, error) {
	o := *opts
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	c := &checker{opts: o, uidOK: map[uidKey]Kind{}, seen: roaring.New(), counted: map[int64]int{}}
	c.unsalt = o.Layout
	c.unsalt.Salt = salt.Salt{} // no salt: a key's rest parsed alone
	var err error
	if c.maxIDs, err = o.UIDs.MaxIDs(ctx); err != nil {
		return nil, fmt.Errorf("fsck: read the max UIDs: %w", err)
	}
	if err := c.scan(ctx); err != nil {
		return &c.rep, err
	}
	if o.Start == 0 && o.End == 0 {
		if err := c.checkIndex(ctx); err != nil {
			return &c.rep, err
		}
	}
	if o.Fix {
		if err := o.Index.Flush(ctx); err != nil {
			return &c.rep, fmt.Errorf("fsck: persist the index repairs: %w", err)
		}
	}
	return &c.rep, nil
}

// scan reads the rows in range: the whole table, or each bucket's range
// of each metric.
func (c *checker) scan(ctx context.Context) error {
	if len(c.opts.Metrics) == 0 {
		return c.scanRange(ctx, nil, nil)
	}
	start, end := c.opts.Start, c.opts.End
	if start == 0 && end == 0 {
		end = rowkey.MaxTimestamp
	}
	for _, m := range c.opts.Metrics {
		for b := 0; b < c.opts.Layout.Buckets(); b++ {
			lo, hi := c.opts.Layout.BucketRange(b, m, start, end)
			if err := c.scanRange(ctx, lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanRange checks the rows of [lo, hi), gathering a row's Partial
// batches first.
func (c *checker) scanRange(ctx context.Context, lo, hi []byte) error {
	sc := c.opts.Data.Scan(ctx, &storage.ScanOptions{Start: lo, Stop: hi,
		ReadOptions: storage.ReadOptions{Families: []string{c.opts.Family}}})
	defer sc.Close()
	for sc.Next() {
		r := sc.Row()
		c.row.add(r)
		if r.Partial {
			continue
		}
		if err := c.checkRow(ctx); err != nil {
			return err
		}
		c.row.reset()
		if c.opts.Progress != nil {
			c.opts.Progress(c.rep.Rows)
		}
	}
	return sc.Close()
}

// rowState is the row being checked, its cells copied out of the scan
// (a row may come in several Partial batches).
type rowState struct {
	key   []byte
	meta  []cellMeta
	arena []byte
	cells []rowkey.Cell
}

// cellMeta is where a copied cell's bytes are in the arena.
type cellMeta struct {
	start, ql, vl int
	ts            int64
	family        string
}

func (r *rowState) add(row storage.Row) {
	if len(r.meta) == 0 {
		r.key = append(r.key[:0], row.Key...)
	}
	for _, cl := range row.Cells {
		r.meta = append(r.meta, cellMeta{start: len(r.arena), ql: len(cl.Qualifier), vl: len(cl.Value), ts: cl.Timestamp, family: cl.Family})
		r.arena = append(r.arena, cl.Qualifier...)
		r.arena = append(r.arena, cl.Value...)
	}
}

// finish makes the cells, pointing into the arena.
func (r *rowState) finish() {
	r.cells = r.cells[:0]
	for _, m := range r.meta {
		q := r.arena[m.start : m.start+m.ql : m.start+m.ql]
		v := r.arena[m.start+m.ql : m.start+m.ql+m.vl : m.start+m.ql+m.vl]
		r.cells = append(r.cells, rowkey.Cell{Family: m.family, Timestamp: m.ts, Qualifier: q, Value: v})
	}
}

func (r *rowState) reset() { r.meta, r.arena = r.meta[:0], r.arena[:0] }

// record counts a finding and keeps it as an example.
func (c *checker) record(f Finding) {
	c.rep.Found[f.Kind]++
	switch {
	case f.Fixed:
		c.rep.Fixed[f.Kind]++
	case f.Unfixed != "":
		c.rep.Unfixed[f.Kind]++
	}
	if len(c.rep.Examples[f.Kind]) < c.opts.Examples {
		f.Row = bytes.Clone(f.Row)
		f.Qualifier = bytes.Clone(f.Qualifier)
		c.rep.Examples[f.Kind] = append(c.rep.Examples[f.Kind], f)
	}
}

// fixResult turns a repair's error into a finding's fields.
func (c *checker) fixResult(f *Finding, err error) {
	if !c.opts.Fix {
		return
	}
	if err != nil {
		f.Unfixed = err.Error()
		c.opts.Logger.Warn("fsck: repair failed", "kind", f.Kind.String(), "row", hex.EncodeToString(f.Row), "err", err)
		return
	}
	f.Fixed = true
}
