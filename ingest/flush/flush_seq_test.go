package flush

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
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
		for _, q := range rowQualifiers(t, s, k, t0) {
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

// rowQualifiers returns the qualifiers of the data row of key at base.
func rowQualifiers(t *testing.T, s *ingesttest.Store, key []byte, base int64) [][]byte {
	t.Helper()
	l := rowkey.DefaultLayout()
	row, err := l.AppendRowKeyFromTSUID(nil, key, base)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Tbl.Get(context.Background(), row, nil)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatal(err)
	}
	var qs [][]byte
	for _, c := range cells {
		qs = append(qs, c.Qualifier)
	}
	return qs
}

// TestFlushBackfillByDataTime: a series whose own points have moved the
// grace past an hour flushes that hour's row even though its points
// arrived a moment ago (a backfill), while a series that has not moved on
// keeps its row, and a point far ahead of the clock does not make a live
// series' open hour complete.
func TestFlushBackfillByDataTime(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	now := int64(t0 + 100*head.RowSpan + head.RowSpan/2) // in the middle of hour 100
	opts := headOpts()
	opts.Clock = func() time.Time { return time.UnixMilli(now) }
	h := openHead(t, fs, opts)
	defer h.Close()
	keys := ingesttest.Keys(3)
	backfill, stuck, live := keys[0], keys[1], keys[2]
	a := h.Appender()
	add := func(k []byte, tm int64) { a.AppendKey(k, series.IntPoint(tm, tm/1000)) }
	for tm := int64(t0); tm <= t0+2*head.RowSpan+25*time.Minute.Milliseconds(); tm += 10_000 {
		add(backfill, tm) // hours 0 and 1 whole, hour 2 up to 2:25
		if tm < t0+head.RowSpan {
			add(stuck, tm) // hour 0 only
		}
	}
	add(live, now-1000)
	add(live, now+48*head.RowSpan)
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	f, err := NewFlusher(h, &FlushOptions{Table: s.Tbl, WriterID: 7, Grace: 10 * time.Minute, Spread: -1, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Flush(context.Background(), time.UnixMilli(now), false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 2 {
		t.Fatalf("flushed %d rows, want the backfill's hours 0 and 1", st.Rows)
	}
	for i, base := range []int64{t0, t0 + head.RowSpan} {
		if pts, _ := s.Points(t, backfill, base); len(pts) != 360 {
			t.Fatalf("backfill hour %d: %d points in the store, want 360", i, len(pts))
		}
	}
	if pts, _ := s.Points(t, stuck, t0); len(pts) != 0 {
		t.Fatalf("a series that has not moved on flushed %d points", len(pts))
	}
}
