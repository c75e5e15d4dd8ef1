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
// A reverse scan uses Bigtable's native reversed ReadRows. The client
// delivers each row whole; Next cuts one larger than the scan's
// MaxBatchBytes into batches.
type scanner struct {
	t        *table
	ctx      context.Context
	filter   bt.Filter
	limit    int
	maxBatch int
	rev      bool
	lo, hi   []byte // remaining key range [lo, hi); nil hi is unbounded

	rows   int            // rows fetched so far, for limit
	cells  []storage.Cell // the chunk's cells, row after row
	ends   []int          // where each row of the chunk ends in cells
	row    int            // the row of ends that pos is in
	pos    int            // the next cell to deliver
	steps  int            // Next calls, for the context check
	cur    storage.Row
	done   bool // no chunk left to fetch
	err    error
	closed bool
}

var _ storage.Scanner = (*scanner)(nil)

// Scan streams the rows in [Start, Stop) that pass the filters, through the
// read-time limits of each family.
func (t *table) Scan(ctx context.Context, opts *storage.ScanOptions) storage.Scanner {
	var o storage.ScanOptions
	if opts != nil {
		o = *opts
	}
	s := &scanner{t: t, ctx: ctx, limit: o.Limit, maxBatch: o.BatchLimit(), rev: o.Reverse, lo: o.Start, hi: o.Stop}
	s.err = s.init(&o)
	return s
}

func (s *scanner) init(o *storage.ScanOptions) error {
	spec := s.t.Spec()
	if err := storage.ValidateScan(spec, o); err != nil {
		return err
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

// Next advances to the next row or batch, fetching the next chunk when
// needed.
func (s *scanner) Next() bool {
	for s.err == nil && !s.closed {
		if s.steps&63 == 0 && s.ctx.Err() != nil {
			// Buffered rows stop too: a cancelled scan ends promptly.
			s.err = s.t.db.classify(s.ctx, "scan "+s.t.name, s.ctx.Err())
			return false
		}
		s.steps++
		if s.pos < len(s.cells) {
			s.nextBatch()
			return true
		}
		if s.done {
			return false
		}
		s.err = s.fetch()
	}
	return false
}

// nextBatch makes the cells of the current row from pos on the current
// batch, as many as fit in maxBatch bytes (at least one).
func (s *scanner) nextBatch() {
	end := s.ends[s.row]
	i, size := s.pos, 0
	for ; i < end; i++ {
		n := storage.CellBytes(&s.cells[i])
		if i > s.pos && size+n > s.maxBatch {
			break
		}
		size += n
	}
	s.cur = storage.Row{Key: s.cells[s.pos].Row, Cells: s.cells[s.pos:i:i], Partial: i < end}
	s.pos = i
	if i == end {
		s.row++
	}
}

// Row returns the current row; its slices are valid until Next or Close.
func (s *scanner) Row() storage.Row { return s.cur }

// Err returns the error that ended the scan, if any.
func (s *scanner) Err() error { return s.err }

// Close releases the scanner and returns Err.
func (s *scanner) Close() error {
	s.closed = true
	s.cells, s.ends, s.cur = nil, nil, storage.Row{}
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
		c = chunk{cells: s.cells[:0], ends: s.ends[:0], want: want, maxBytes: s.t.db.opts.ScanChunkBytes}
		return s.t.bt.ReadRows(ctx, s.rowRange(), c.add, s.readOptions(want)...)
	})
	if err != nil {
		return err
	}
	s.cells, s.ends, s.pos, s.row = c.cells, c.ends, 0, 0
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
	ends     []int // where each row ends in cells
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
	if len(c.cells) > start {
		c.ends = append(c.ends, len(c.cells))
	}
	c.rows++
	c.last = r.Key()
	if c.rows < c.want && c.bytes >= c.maxBytes {
		c.full = true
	}
	return c.rows < c.want && !c.full
}
