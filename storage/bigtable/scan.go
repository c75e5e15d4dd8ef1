package bigtable

import (
	"bytes"
	"context"
	"fmt"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// scanner streams a Scan in chunks: each chunk is one ReadRows request of at
// most ScanChunkRows rows (and about ScanChunkBytes bytes), and the next
// chunk starts after the last row returned (before it, in reverse). Chunks
// turn the client's push-style callback into the contract's pull-style Next
// without a goroutine, bound memory, and let each chunk be retried alone.
// A reverse scan uses Bigtable's native reversed ReadRows.
type scanner struct {
	t      *table
	ctx    context.Context
	filter bt.Filter
	limit  int
	rev    bool
	lo, hi []byte // remaining key range [lo, hi); nil hi is unbounded

	rows   int // rows delivered so far, for limit
	cells  []storage.Cell
	pos    int
	cur    storage.Cell
	done   bool // no chunk left to fetch
	err    error
	closed bool
}

var _ storage.Scanner = (*scanner)(nil)

// Scan streams the cells of the rows in [Start, Stop) that pass the filters,
// through the read-time limits of each family.
func (t *table) Scan(ctx context.Context, opts *storage.ScanOptions) storage.Scanner {
	var o storage.ScanOptions
	if opts != nil {
		o = *opts
	}
	s := &scanner{t: t, ctx: ctx, limit: o.Limit, rev: o.Reverse, lo: o.Start, hi: o.Stop}
	s.err = s.init(&o)
	return s
}

func (s *scanner) init(o *storage.ScanOptions) error {
	spec := s.t.Spec()
	if err := storage.ValidateRead(spec, &o.ReadOptions); err != nil {
		return err
	}
	if o.Limit < 0 {
		return storage.Invalidf("scan limit %d is negative", o.Limit)
	}
	s.filter = readFilter(spec, &o.ReadOptions, s.t.db.nowTimestamp())
	if o.RowRegex != "" {
		rx, err := rowRegex(o.RowRegex)
		if err != nil {
			return err
		}
		s.filter = chainOf(nonNil(bt.RowKeyFilter(rx), s.filter))
	}
	s.done = s.empty()
	return nil
}

func nonNil(fs ...bt.Filter) []bt.Filter {
	out := fs[:0]
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// empty reports that the remaining range holds no key. A non-nil empty Stop
// ends before every key, which the client would read as unbounded.
func (s *scanner) empty() bool {
	return s.hi != nil && (len(s.hi) == 0 || bytes.Compare(s.lo, s.hi) >= 0)
}

// Next advances to the next cell, fetching the next chunk when needed.
func (s *scanner) Next() bool {
	for s.err == nil && !s.closed {
		if s.pos&63 == 0 && s.ctx.Err() != nil {
			// Buffered cells stop too: a cancelled scan ends promptly.
			s.err = s.t.db.classify(s.ctx, "scan "+s.t.name, s.ctx.Err())
			return false
		}
		if s.pos < len(s.cells) {
			s.cur = s.cells[s.pos]
			s.pos++
			return true
		}
		if s.done {
			return false
		}
		s.err = s.fetch()
	}
	return false
}

// Cell returns the current cell; its slices are valid until Next or Close.
func (s *scanner) Cell() storage.Cell { return s.cur }

// Err returns the error that ended the scan, if any.
func (s *scanner) Err() error { return s.err }

// Close releases the scanner and returns Err.
func (s *scanner) Close() error {
	s.closed = true
	s.cells, s.cur = nil, storage.Cell{}
	return s.err
}

// fetch reads the next chunk into s.cells.
func (s *scanner) fetch() error {
	want := s.t.db.opts.ScanChunkRows
	if s.limit > 0 {
		want = min(want, s.limit-s.rows)
	}
	var c chunk
	err := s.t.db.call(s.ctx, fmt.Sprintf("scan %s", s.t.name), func(ctx context.Context) error {
		c = chunk{cells: s.cells[:0], want: want, maxBytes: s.t.db.opts.ScanChunkBytes}
		return s.t.bt.ReadRows(ctx, s.rowRange(), c.add, s.readOptions(want)...)
	})
	if err != nil {
		return err
	}
	s.cells, s.pos = c.cells, 0
	s.rows += c.rows
	s.advance(c)
	return nil
}

// advance moves the remaining range past the chunk and decides whether
// another chunk is needed.
func (s *scanner) advance(c chunk) {
	if c.rows < c.want && !c.full {
		s.done = true // the server ran out of rows
	}
	if s.limit > 0 && s.rows >= s.limit {
		s.done = true
	}
	if c.rows == 0 {
		return
	}
	if s.rev {
		s.hi = []byte(c.last)
	} else {
		s.lo = append([]byte(c.last), 0)
	}
	if s.empty() {
		s.done = true
	}
}

func (s *scanner) rowRange() bt.RowRange {
	return bt.NewRange(string(s.lo), string(s.hi))
}

func (s *scanner) readOptions(want int) []bt.ReadOption {
	opts := append(readOpts(s.filter), bt.LimitRows(int64(want)))
	if s.rev {
		opts = append(opts, bt.ReverseScan())
	}
	return opts
}

// chunk collects the rows of one ReadRows call.
type chunk struct {
	cells    []storage.Cell
	want     int
	maxBytes int
	rows     int
	bytes    int
	full     bool // stopped early on maxBytes
	last     string
}

func (c *chunk) add(r bt.Row) bool {
	start := len(c.cells)
	c.cells = appendRowCells(c.cells, r)
	for _, cell := range c.cells[start:] {
		c.bytes += len(cell.Qualifier) + len(cell.Value) + 16
	}
	c.rows++
	c.last = r.Key()
	if c.rows < c.want && c.bytes >= c.maxBytes {
		c.full = true
	}
	return c.rows < c.want && !c.full
}
