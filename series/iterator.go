package series

// Iterator walks points in ascending time order, one point per timestamp.
// Errors are sticky: after Next returns false, Err says whether the points
// ran out or the read failed. An Iterator is not safe for concurrent use.
type Iterator interface {
	// Next advances to the next point and reports whether there is one.
	Next() bool
	// SeekTime advances to the first point at or after t (never backwards) and
	// reports whether there is one.
	SeekTime(t int64) bool
	// At returns the current point.
	At() Point
	// Err returns the error that ended the iteration, if any.
	Err() error
}

// SliceIterator iterates over a sorted slice of points. The zero value is empty.
type SliceIterator struct {
	pts []Point
	i   int
}

// NewSliceIterator returns an iterator over pts, which must be sorted by T
// with no duplicates. Pass a previous iterator as reuse to avoid allocating.
func NewSliceIterator(reuse *SliceIterator, pts []Point) *SliceIterator {
	if reuse == nil {
		reuse = &SliceIterator{}
	}
	reuse.pts, reuse.i = pts, -1
	return reuse
}

// Next implements Iterator.
func (it *SliceIterator) Next() bool {
	if it.i+1 >= len(it.pts) {
		it.i = len(it.pts)
		return false
	}
	it.i++
	return true
}

// SeekTime implements Iterator.
func (it *SliceIterator) SeekTime(t int64) bool {
	if it.i < 0 {
		it.i = 0
	}
	for it.i < len(it.pts) && it.pts[it.i].T < t {
		it.i++
	}
	return it.i < len(it.pts)
}

// At implements Iterator.
func (it *SliceIterator) At() Point { return it.pts[it.i] }

// Err implements Iterator.
func (it *SliceIterator) Err() error { return nil }
