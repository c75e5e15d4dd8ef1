package flush

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// TestFlushBatchQualifiers checks the flush numbers of dense columns: the
// rows of one batch share one, later batches take later ones, and a row
// too long for one column gives each further column a number of its own,
// so no two columns of a row share a qualifier and every point reads back.
func TestFlushBatchQualifiers(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	h := openHead(t, fs, headOpts())
	defer h.Close()
	keys := ingesttest.Keys(20)
	m := ingesttest.Model{}
	a := h.Appender()
	for i, k := range keys {
		n := 10
		if i == 0 {
			n = rowkey.MaxDensePoints + 10 // two columns
		}
		for j := range n {
			p := series.IntPoint(t0+int64(j)*50, int64(i*j))
			a.AppendKey(k, p)
			m.Add(k, p)
		}
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	opts := flushOpts(s)
	opts.BatchRows = 8
	f, err := NewFlusher(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Flush(context.Background(), time.UnixMilli(t0+3*head.RowSpan), true); err != nil {
		t.Fatal(err)
	}
	m.CheckStore(t, s, 2)

	seqs := map[uint32]int{} // flush number: columns
	var long []uint32
	for i, k := range keys {
		for _, c := range s.Cells(t, k, t0) {
			q := c.Qualifier
			writer, seq, err := rowkey.ParseDenseQualifier(q)
			if err != nil || writer != 7 {
				t.Fatalf("series %d: qualifier %x: writer %d, %v", i, q, writer, err)
			}
			seqs[seq]++
			if i == 0 {
				long = append(long, seq)
			}
		}
	}
	if len(long) != 2 || long[0] == long[1] {
		t.Fatalf("the long row's columns have flush numbers %v, want two distinct", long)
	}
	// 20 rows in batches of 8: 8, 8 and 4 columns, and the long row's
	// second column alone.
	counts := map[int]int{}
	for _, n := range seqs {
		counts[n]++
	}
	if len(seqs) != 4 || counts[8] != 2 || counts[4] != 1 || counts[1] != 1 {
		t.Fatalf("columns per flush number %v, want 8, 8, 4 and 1", seqs)
	}
}
