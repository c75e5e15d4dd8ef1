package head

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tsd-db/tsd/series"
)

// SeriesRef names a series in the head for the life of the process. It is
// also the series' id in the write-ahead log. The zero value names nothing.
type SeriesRef uint64

// memSeries is one series in the head: its key and its open hour rows.
type memSeries struct {
	ref SeriesRef
	key string // metric UID ‖ tagk/tagv UIDs, immutable
	// walSeg is the segment holding this series' latest series record; an
	// appender that sees another segment writes the record again.
	walSeg atomic.Uint32
	// registered says the series index knows the series: set once, after
	// the registrar returned, and checked by every commit before it logs
	// a point of the series (a series the index does not know must never
	// hold points).
	registered atomic.Bool

	mu   sync.Mutex
	rows []openRow // guarded by mu; ascending base, one row per base
	// flushing holds the rows a flush took out and is writing (guarded by
	// mu; ascending base, one per base). Readers still see them: a point is
	// in rows, in flushing or in the store at every moment. A row in rows
	// with the same base holds later writes and wins ties.
	flushing []openRow
	// flushedTop is the base of the newest row this process flushed (0:
	// none) and bit i of flushedBits says whether the row at flushedTop - i
	// hours was flushed (guarded by mu): a new row for such an hour is late
	// and its column goes to the compaction queue.
	flushedTop  int64
	flushedBits uint64
}

// openRow is an hour row of a series not yet flushed to the store.
type openRow struct {
	base   int64  // first millisecond of the hour
	minSeg uint32 // oldest WAL segment holding a point of this row
	// id is unique among the rows this process creates and mod counts the
	// changes to its points: together they name the row's contents, which
	// is what a reader's fingerprint needs (rowFP), at the cost of a
	// counter rather than a hash of the chunk. Every change to chunk or
	// ooo bumps mod, under the series lock.
	id        uint64
	mod       uint64
	lastWrite int64 // arrival of the latest point, Unix ms (flush grace)
	chunk     rowChunk
	ooo       []series.Point // points older than chunk.t; sorted, unique T
	// maybeStored says some points may already be in the store: the row
	// was rebuilt from the log (a crash may have come after its flush) or
	// put back after a failed write (Apply is not atomic across rows). Its
	// flush is queued for compaction.
	maybeStored bool
}

const (
	// oooMax is the out-of-order buffer size that triggers a merge into the
	// chunk: out-of-order points cost a re-encode per oooMax of them.
	oooMax = 32
	// Fixed memory charged per series and per row, beyond their buffers.
	seriesOverhead = int64(unsafe.Sizeof(memSeries{})) + 64 // + map entry, ref slot
	rowOverhead    = int64(unsafe.Sizeof(openRow{}))
	pointSize      = int64(unsafe.Sizeof(series.Point{}))
)

// append adds p, which arrived now and was logged in WAL segment seg, and
// returns the change in the head's memory. A new row is entered in the
// hour index and touched in the series index. The caller holds s.mu.
func (s *memSeries) append(h *Head, p series.Point, seg uint32, now int64) int64 {
	base := rowBase(p.T)
	i, delta := len(s.rows)-1, int64(0)
	if i < 0 || s.rows[i].base != base {
		var found bool
		if i, found = s.findRow(base); !found {
			i, delta = s.newRow(i, base, h.rowIDs.Add(1))
			h.hours.list(s, base)
			if h.touch != nil {
				h.touch.Touch(keyBytes(s.key), base)
			}
		}
	}
	r := &s.rows[i]
	before := r.bytes()
	r.add(p)
	if r.minSeg == 0 || seg < r.minSeg {
		r.minSeg = seg
	}
	r.lastWrite = now
	return delta + r.bytes() - before
}

// newRow inserts an empty row at base with id at index i and returns i
// and the memory the new row costs.
func (s *memSeries) newRow(i int, base int64, id uint64) (int, int64) {
	r := openRow{base: base, id: id}
	if n := len(s.rows); n > 0 {
		// Rows of one series are alike: size the new chunk like the newest
		// row's, so it is allocated once rather than grown by doubling.
		r.chunk.w.b = make([]byte, 0, len(s.rows[n-1].chunk.w.b)*9/8+8)
	}
	s.rows = slices.Insert(s.rows, i, r)
	return i, rowOverhead + int64(cap(r.chunk.w.b))
}

// findRow returns where the row at base is, or would be inserted.
func (s *memSeries) findRow(base int64) (int, bool) { return findBase(s.rows, base) }

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// add stores p: appended to the chunk when it is the newest point, else
// kept in the out-of-order buffer, where a later point with the same
// timestamp replaces an earlier one.
func (r *openRow) add(p series.Point) {
	r.mod++
	if r.chunk.n == 0 || p.T > r.chunk.t {
		r.chunk.append(r.base, p)
		return
	}
	i, found := slices.BinarySearchFunc(r.ooo, p.T, func(q series.Point, t int64) int { return cmpInt64(q.T, t) })
	if found {
		r.ooo[i] = p
		return
	}
	r.ooo = slices.Insert(r.ooo, i, p)
	if len(r.ooo) >= oooMax {
		r.mergeOOO()
	}
}

// mergeOOO rewrites the chunk with the out-of-order points merged in.
func (r *openRow) mergeOOO() {
	buf := getPoints()
	pts := r.appendPoints((*buf)[:0], math.MinInt64, math.MaxInt64)
	r.chunk.reset()
	for _, p := range pts {
		r.chunk.append(r.base, p)
	}
	r.ooo = r.ooo[:0]
	*buf = pts
	putPoints(buf)
}

// bytes is the memory the row holds.
func (r *openRow) bytes() int64 {
	return rowOverhead + int64(cap(r.chunk.w.b)) + int64(cap(r.ooo))*pointSize
}

// appendPoints appends the row's points with mint <= T < maxt to dst in
// time order. Where the chunk and the out-of-order buffer share a
// timestamp, the buffer's point is the later write and wins.
func (r *openRow) appendPoints(dst []series.Point, mint, maxt int64) []series.Point {
	var it chunkIter
	it.reset(r.chunk.w.b, r.chunk.n, r.base)
	if len(r.ooo) == 0 {
		return appendRange(dst, &it, mint, maxt)
	}
	ooo, has := r.ooo, it.next()
	for has || len(ooo) > 0 {
		var p series.Point
		switch {
		case !has || (len(ooo) > 0 && ooo[0].T < it.p.T):
			p, ooo = ooo[0], ooo[1:]
		case len(ooo) > 0 && ooo[0].T == it.p.T:
			p, ooo = ooo[0], ooo[1:]
			has = it.next()
		default:
			p = it.p
			has = it.next()
		}
		if p.T >= maxt {
			break
		}
		if p.T >= mint {
			dst = append(dst, p)
		}
	}
	return dst
}

// appendRange appends the points of it with mint <= T < maxt to dst,
// decoding the whole chunk in one loop and then cutting the range.
func appendRange(dst []series.Point, it *chunkIter, mint, maxt int64) []series.Point {
	n := len(dst)
	dst, _ = it.appendAll(dst)
	pts := dst[n:]
	lo, _ := slices.BinarySearchFunc(pts, mint, cmpPointTime)
	hi, _ := slices.BinarySearchFunc(pts, maxt, cmpPointTime)
	if lo == 0 {
		return dst[:n+hi]
	}
	return append(dst[:n], pts[lo:hi]...)
}

// cmpPointTime orders a point against a time.
func cmpPointTime(p series.Point, t int64) int { return cmpInt64(p.T, t) }

// flushed reports whether this process may have flushed a row of s at
// base before: exactly within the 64 hours below flushedTop, and always
// for an older hour, which the window forgot (a series whose points run
// far ahead of a late one: a client with a fast clock). The caller holds
// s.mu.
func (s *memSeries) flushed(base int64) bool {
	if s.flushedTop == 0 || base > s.flushedTop {
		return false
	}
	d := (s.flushedTop - base) / RowSpan
	return d >= 64 || s.flushedBits>>d&1 == 1
}

// markFlushed records a flush of the row at base. The caller holds s.mu.
func (s *memSeries) markFlushed(base int64) {
	switch {
	case s.flushedTop == 0:
		s.flushedTop, s.flushedBits = base, 1
	case base > s.flushedTop:
		if d := (base - s.flushedTop) / RowSpan; d < 64 {
			s.flushedBits = s.flushedBits<<d | 1
		} else {
			s.flushedBits = 1
		}
		s.flushedTop = base
	default:
		if d := (s.flushedTop - base) / RowSpan; d < 64 {
			s.flushedBits |= 1 << d
		}
	}
}

// pointsPool holds scratch point slices for merges and reads.
var pointsPool = sync.Pool{New: func() any { return new([]series.Point) }}

func getPoints() *[]series.Point  { return pointsPool.Get().(*[]series.Point) }
func putPoints(p *[]series.Point) { *p = (*p)[:0]; pointsPool.Put(p) }

// keyBytes views a series key as bytes without copying; callers only read.
func keyBytes(key string) []byte { return unsafe.Slice(unsafe.StringData(key), len(key)) }
