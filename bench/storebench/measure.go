package storebench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBatch is the cells per batch of the put figure.
const DefaultBatch = 1000

// PutRate writes cells to t in batches of batch cells from writers
// goroutines and returns cells per second.
func PutRate(ctx context.Context, t Target, cells []Cell, batch, writers int) (float64, error) {
	nb := (len(cells) + batch - 1) / batch
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= nb || errs[w] != nil {
					return
				}
				errs[w] = t.Put(ctx, cells[i*batch:min((i+1)*batch, len(cells))])
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("put: %w", err)
		}
	}
	return float64(len(cells)) / el.Seconds(), nil
}

// Preload writes rows full rows (RowCells cells each) to t and returns
// their keys.
func Preload(ctx context.Context, t Target, rows int) ([][]byte, error) {
	cells, err := RowsCells(rows)
	if err != nil {
		return nil, err
	}
	if _, err := PutRate(ctx, t, cells, DefaultBatch, 1); err != nil {
		return nil, err
	}
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = cells[i*RowCells].Row[:]
	}
	return keys, nil
}

// ReadOp is how ReadLatency reads a row.
type ReadOp int

const (
	// OpGet reads with Target.Get.
	OpGet ReadOp = iota
	// OpScan reads with Target.Scan.
	OpScan
	// OpGetReuse reads with Target.GetReuse.
	OpGetReuse
)

// String names the op as the benchmarks do.
func (op ReadOp) String() string {
	switch op {
	case OpGet:
		return "get"
	case OpScan:
		return "scan"
	case OpGetReuse:
		return "get-reuse"
	}
	return fmt.Sprintf("ReadOp(%d)", int(op))
}

// reader returns t's read method for op.
func (op ReadOp) reader(t Target) func(context.Context, []byte) (int, error) {
	switch op {
	case OpScan:
		return t.Scan
	case OpGetReuse:
		return t.GetReuse
	}
	return t.Get
}

// ReadLatency reads reads rows (cycling over keys in a fixed stride order)
// with op and returns nanoseconds per row. Each row must hold RowCells
// cells.
func ReadLatency(ctx context.Context, t Target, keys [][]byte, reads int, op ReadOp) (float64, error) {
	read := op.reader(t)
	start := time.Now()
	for i := 0; i < reads; i++ {
		k := keys[(i*7919)%len(keys)]
		n, err := read(ctx, k)
		if err != nil {
			return 0, fmt.Errorf("read row %x: %w", k, err)
		}
		if n != RowCells {
			return 0, fmt.Errorf("read row %x: %d cells, want %d", k, n, RowCells)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(reads), nil
}
