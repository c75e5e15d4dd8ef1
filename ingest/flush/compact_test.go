package flush

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// pipeline is a head, its flusher and compactor over a real store, on a
// clock the test moves.
type pipeline struct {
	t     testing.TB
	fs    vfs.FS
	s     *ingesttest.Store
	data  *ingesttest.HookTable
	clock int64
	h     *head.Head
	f     *Flusher
	c     *Compactor
}

func newPipeline(t *testing.T, fs vfs.FS, s *ingesttest.Store, format schema.Format, writer uint32, dir string) *pipeline {
	t.Helper()
	return newPipelineAt(t, fs, s, format, writer, dir, t0)
}

// newPipelineAt is newPipeline with the clock at clock when the head
// opens: newRollupPipelineDir with rollups off.
func newPipelineAt(t *testing.T, fs vfs.FS, s *ingesttest.Store, format schema.Format, writer uint32, dir string, clock int64) *pipeline {
	t.Helper()
	return newRollupPipelineDir(t, fs, s, nil, format, &clock, dir, writer)
}

func (p *pipeline) flush(all bool) FlushStats {
	p.t.Helper()
	st, err := p.f.Flush(context.Background(), time.UnixMilli(p.clock), all)
	if err != nil {
		p.t.Fatal(err)
	}
	return st
}

func (p *pipeline) compact(drain bool) CompactStats {
	p.t.Helper()
	st, err := p.c.Compact(context.Background(), time.UnixMilli(p.clock), drain)
	if err != nil {
		p.t.Fatal(err)
	}
	return st
}

func (p *pipeline) commit(key []byte, pts ...series.Point) {
	p.t.Helper()
	a := p.h.Appender()
	for _, pt := range pts {
		if _, err := a.AppendKey(key, pt); err != nil {
			p.t.Fatal(err)
		}
	}
	if err := a.Commit(false); err != nil {
		p.t.Fatal(err)
	}
}

// commitTo is commit that also adds the points to m.
func (p *pipeline) commitTo(m ingesttest.Model, key []byte, pts ...series.Point) {
	p.t.Helper()
	p.commit(key, pts...)
	for _, pt := range pts {
		m.Add(key, pt)
	}
}

// queue returns the compaction queue: data row key → entry qualifiers.
func queue(t testing.TB, s *ingesttest.Store) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	sc := s.Meta.Scan(context.Background(), &storage.ScanOptions{Start: []byte{2}, Stop: []byte{3}})
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			if c.Family != schema.MetaFamilyCompaction {
				t.Fatalf("queue row %x has a cell in family %s", c.Row, c.Family)
			}
			out[string(c.Row[1:])] = append(out[string(c.Row[1:])], bytes.Clone(c.Qualifier))
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func rowKeyOf(t testing.TB, key []byte, base int64) []byte {
	l := rowkey.DefaultLayout()
	row, err := l.AppendRowKeyFromTSUID(nil, key, base)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func TestCompactLateColumns(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			p := newPipeline(t, fs, s, format, 7, "wal")
			defer p.h.Close()
			m := ingesttest.Model{}
			keys := ingesttest.Keys(10)
			p.clock = t0 + 3*head.RowSpan
			appendRandom(t, p.h, rand.New(rand.NewPCG(21, 21)), keys, 3000, m)
			p.clock += 2 * time.Minute.Milliseconds()
			if st := p.flush(false); st.Queued != 0 || st.Rows == 0 {
				t.Fatalf("first flush of complete rows: %+v", st)
			}
			if q := queue(t, s); len(q) != 0 {
				t.Fatalf("complete rows were queued: %d", len(q))
			}
			// Late points for hour 0 of half the series: new timestamps and
			// overwrites of flushed ones.
			rng := rand.New(rand.NewPCG(22, 22))
			for _, key := range keys[:5] {
				old := m.Points(string(key), t0, t0+head.RowSpan)
				late := []series.Point{ingesttest.RandomPoint(rng, t0+int64(rng.IntN(head.RowSpan))), ingesttest.RandomPoint(rng, old[0].T)}
				p.commit(key, late...)
				for _, pt := range late {
					m.Add(key, pt)
				}
			}
			p.clock += 2 * time.Minute.Milliseconds()
			if st := p.flush(false); st.Rows != 5 || st.Queued != 5 {
				t.Fatalf("flush of late rows: %+v, want 5 rows queued", st)
			}
			q := queue(t, s)
			for _, key := range keys[:5] {
				if len(q[string(rowKeyOf(t, key, t0))]) != 1 {
					t.Fatalf("late row of %x not queued: %x", key, q)
				}
			}
			m.CheckStore(t, s, 2)
			st := p.compact(false)
			if st.Compacted != 5 || st.Folded != 10 || st.Entries != 5 || st.Rows != 5 {
				t.Fatalf("compaction: %+v", st)
			}
			m.CheckStore(t, s, 1)
			if q := queue(t, s); len(q) != 0 {
				t.Fatalf("queue after compaction: %x", q)
			}
			checkFormat(t, s, keys, format)
		})
	}
}

// checkFormat checks every data cell of keys' rows is of the format's kind.
func checkFormat(t *testing.T, s *ingesttest.Store, keys [][]byte, format schema.Format) {
	t.Helper()
	for _, key := range keys {
		for base := int64(t0); base < t0+4*head.RowSpan; base += head.RowSpan {
			cells, _ := s.Tbl.Get(context.Background(), rowKeyOf(t, key, base), nil)
			for _, c := range cells {
				k := rowkey.Classify(c.Qualifier)
				ok := k == rowkey.ColumnDense
				if format == schema.FormatOpenTSDB {
					ok = k == rowkey.ColumnCompacted || k == rowkey.ColumnSingle
				}
				if !ok {
					t.Fatalf("%s table: column %x is of kind %d", format, c.Qualifier, k)
				}
			}
		}
	}
}

// TestCompactKeepsConcurrentColumn: a column another writer adds after the
// compactor read the row survives the compaction, as does its queue entry,
// and the next round folds it in.
func TestCompactKeepsConcurrentColumn(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	p := newPipeline(t, fs, s, schema.FormatDense, 7, "wal")
	defer p.h.Close()
	key := ingesttest.SeriesKey(1, 1, 1)
	m := ingesttest.Model{}
	p.clock = t0 + head.RowSpan + 2*time.Minute.Milliseconds()
	for i := range 10 {
		pt := series.IntPoint(t0+int64(i)*1000, int64(i))
		p.commit(key, pt)
		m.Add(key, pt)
	}
	p.clock += 2 * time.Minute.Milliseconds()
	p.flush(false)
	late := series.IntPoint(t0+500_000, 500)
	p.commit(key, late)
	m.Add(key, late)
	p.clock += 2 * time.Minute.Milliseconds()
	p.flush(false)

	row := rowKeyOf(t, key, t0)
	other := series.Float64Point(t0+600_000, 6.5)
	var enc rowkey.DenseEncoder
	otherQ := rowkey.AppendDenseQualifier(nil, 99, 1)
	otherV, err := enc.Append(nil, t0/1000, []series.Point{other})
	if err != nil {
		t.Fatal(err)
	}
	once := false
	p.data.SetHook(func(op string, r []byte) {
		if op != "get" || once || !bytes.Equal(r, row) {
			return
		}
		once = true // writer 99 flushes a late column of this row, then queues it
		ctx := context.Background()
		ts := p.clock * 1000
		if err := s.Tbl.Put(ctx, row, []storage.Cell{{Family: "t", Qualifier: otherQ, Timestamp: ts, Value: otherV}}); err != nil {
			t.Error(err)
		}
		if err := s.Meta.Put(ctx, append([]byte{2}, row...), []storage.Cell{{Family: "q", Qualifier: otherQ, Timestamp: ts}}); err != nil {
			t.Error(err)
		}
	})
	st := p.compact(false)
	p.data.SetHook(nil)
	m.Add(key, other)
	if st.Compacted != 1 || st.Folded != 2 {
		t.Fatalf("compaction: %+v", st)
	}
	m.CheckStore(t, s, 2)
	if q := queue(t, s)[string(row)]; len(q) != 1 || !bytes.Equal(q[0], otherQ) {
		t.Fatalf("queue after the first round: %x, want writer 99's entry only", q)
	}
	st = p.compact(false)
	if st.Compacted != 1 || st.Folded != 2 || st.Entries != 1 {
		t.Fatalf("second compaction: %+v", st)
	}
	m.CheckStore(t, s, 1)
	if q := queue(t, s); len(q) != 0 {
		t.Fatalf("queue after the second round: %x", q)
	}
}

// TestCompactQueueSurvivesRestart: the queue is in the store, so rows
// queued before a restart are compacted after it.
func TestCompactQueueSurvivesRestart(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	p := newPipeline(t, fs, s, schema.FormatDense, 7, "wal")
	m := ingesttest.Model{}
	keys := ingesttest.Keys(4)
	p.clock = t0 + 4*head.RowSpan
	appendRandom(t, p.h, rand.New(rand.NewPCG(23, 23)), keys, 2000, m)
	p.flush(true)
	for _, key := range keys {
		pt := series.IntPoint(t0+1, 1)
		p.commit(key, pt)
		m.Add(key, pt)
	}
	p.flush(true)
	if q := queue(t, s); len(q) != len(keys) {
		t.Fatalf("%d rows queued, want %d", len(q), len(keys))
	}
	p.h.Close()
	s.DB.Close()

	s = openStore(t, fs)
	defer s.DB.Close()
	p = newPipeline(t, fs, s, schema.FormatDense, 7, "wal")
	defer p.h.Close()
	p.clock = t0 + 5*head.RowSpan
	if st := p.compact(false); st.Compacted != int64(len(keys)) {
		t.Fatalf("compaction after restart: %+v", st)
	}
	m.CheckStore(t, s, 1)
	if q := queue(t, s); len(q) != 0 {
		t.Fatalf("queue: %x", q)
	}
}

// TestDrain: the shutdown flush writes open rows early and queues them;
// Drain compacts what is queued but keeps the entries of hours still open,
// so a column written after a restart is folded in later.
func TestDrain(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	p := newPipeline(t, fs, s, schema.FormatOpenTSDB, 7, "wal")
	key := ingesttest.SeriesKey(1, 1, 1)
	m := ingesttest.Model{}
	p.clock = t0 + 30*time.Minute.Milliseconds()
	add := func(from int) {
		for i := from; i < from+5; i++ {
			pt := series.IntPoint(t0+int64(i)*1000, int64(i))
			p.commit(key, pt)
			m.Add(key, pt)
		}
	}
	add(0)
	if st := p.flush(true); st.Queued != 1 {
		t.Fatalf("shutdown flush of an open hour: %+v", st)
	}
	if st := p.compact(true); st.Compacted != 0 || st.Entries != 0 {
		t.Fatalf("drain of a single-column open row: %+v", st)
	}
	p.h.Close()
	p = newPipeline(t, fs, s, schema.FormatOpenTSDB, 7, "wal") // restart
	defer p.h.Close()
	p.clock = t0 + 40*time.Minute.Milliseconds()
	add(100)
	p.flush(true)
	if st := p.compact(true); st.Compacted != 1 || st.Entries != 0 {
		t.Fatalf("drain of two columns in an open hour: %+v", st)
	}
	m.CheckStore(t, s, 1)
	if q := queue(t, s); len(q) != 1 {
		t.Fatalf("drain dropped the open hour's entries: %x", q)
	}
	// After the hour (and the skew allowance) the folded columns' entries go.
	p.clock = t0 + 2*head.RowSpan
	if st := p.compact(false); st.Compacted != 0 || st.Entries != 2 {
		t.Fatalf("compaction after the hour: %+v", st)
	}
	if q := queue(t, s); len(q) != 0 {
		t.Fatalf("queue: %x", q)
	}
	m.CheckStore(t, s, 1)
}

// TestOpenTSDBConflict: two writers flush one row of an opentsdb table.
// With the same timestamps the second check-and-put conflicts and merges
// (the newer write wins); with other timestamps both columns stay and
// readers merge them.
func TestOpenTSDBConflict(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	a := newPipeline(t, fs, s, schema.FormatOpenTSDB, 1, "wal-a")
	defer a.h.Close()
	b := newPipeline(t, fs, s, schema.FormatOpenTSDB, 2, "wal-b")
	defer b.h.Close()
	key := ingesttest.SeriesKey(1, 1, 1)
	m := ingesttest.Model{}
	for i := range 4 {
		a.commit(key, series.IntPoint(t0+int64(i)*1000, 100))
		pt := series.IntPoint(t0+int64(i)*1000, int64(i)) // same widths: same qualifier
		b.commit(key, pt)
		m.Add(key, pt)
	}
	a.clock, b.clock = t0+2*head.RowSpan, t0+2*head.RowSpan+1000
	a.flush(false)
	if st := b.flush(false); st.Conflicts != 1 || st.Rows != 1 {
		t.Fatalf("second writer's flush: %+v", st)
	}
	m.CheckStore(t, s, 1)
	// Other timestamps: a second column, no conflict.
	pt := series.IntPoint(t0+10_000, 7)
	a.commit(key, pt)
	m.Add(key, pt)
	a.clock += head.RowSpan
	if st := a.flush(false); st.Conflicts != 0 {
		t.Fatalf("flush of other timestamps: %+v", st)
	}
	m.CheckStore(t, s, 2)
}

// TestCompactOrphanEntries: an entry naming a column the row no longer
// holds goes once it is older than the skew allowance; a recent one waits.
func TestCompactOrphanEntries(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	p := newPipeline(t, fs, s, schema.FormatDense, 7, "wal")
	defer p.h.Close()
	row := rowKeyOf(t, ingesttest.SeriesKey(1, 1, 1), t0)
	p.clock = t0 + 5*head.RowSpan
	ctx := context.Background()
	put := func(q string, ts int64) {
		if err := s.Meta.Put(ctx, append([]byte{2}, row...), []storage.Cell{{Family: "q", Qualifier: []byte(q), Timestamp: ts * 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	put("old", p.clock-2*time.Minute.Milliseconds())
	put("new", p.clock)
	if st := p.compact(false); st.Entries != 1 {
		t.Fatalf("compaction: %+v", st)
	}
	if q := queue(t, s)[string(row)]; len(q) != 1 || string(q[0]) != "new" {
		t.Fatalf("queue: %q", q)
	}
}

// TestFlushVisibleWhileWriting: while a row is being written it is still
// read from the head.
func TestFlushVisibleWhileWriting(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	p := newPipeline(t, fs, s, schema.FormatDense, 7, "wal")
	defer p.h.Close()
	key := ingesttest.SeriesKey(1, 1, 1)
	pts := []series.Point{series.IntPoint(t0, 1), series.IntPoint(t0+1000, 2)}
	p.commit(key, pts...)
	var during []series.Point
	p.data.SetHook(func(op string, _ []byte) {
		if op == "apply" {
			during = p.h.AppendPoints(nil, key, 0, 1<<62)
		}
	})
	p.clock = t0 + 2*head.RowSpan
	p.flush(false)
	if !slices.Equal(during, pts) {
		t.Fatalf("during the write the head returned %v", during)
	}
	if after := p.h.AppendPoints(nil, key, 0, 1<<62); len(after) != 0 {
		t.Fatalf("after the write the head still holds %v", after)
	}
}

// TestLateAfterRestartQueued: a process that flushed an hour row is gone,
// and its flush history with it; a late point for that hour reaching the
// next process becomes a second column, which must still be queued and
// folded. The second head logs to another directory, so nothing is replayed
// and only the hour's age can tell the row may already be stored.
func TestLateAfterRestartQueued(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			p := newPipeline(t, fs, s, format, 7, "wal")
			m := ingesttest.Model{}
			keys := ingesttest.Keys(3)
			p.clock = t0 + 3*head.RowSpan
			appendRandom(t, p.h, rand.New(rand.NewPCG(31, 31)), keys, 900, m)
			p.flush(true)
			p.compact(true)
			if err := p.h.Close(); err != nil {
				t.Fatal(err)
			}

			p = newPipelineAt(t, fs, s, format, 8, "wal2", t0+4*head.RowSpan)
			defer p.h.Close()
			if n := p.h.ReplayStats().Samples; n != 0 {
				t.Fatalf("second head replayed %d samples, want 0", n)
			}
			for i, key := range keys {
				pt := series.IntPoint(t0+int64(i)*1000+1, 42)
				p.commit(key, pt)
				m.Add(key, pt)
			}
			p.clock += 2 * time.Minute.Milliseconds()
			if st := p.flush(false); st.Rows != int64(len(keys)) || st.Queued != int64(len(keys)) {
				t.Fatalf("flush of late rows after restart: %+v, want %d rows queued", st, len(keys))
			}
			m.CheckStore(t, s, 2)
			if st := p.compact(false); st.Compacted != int64(len(keys)) {
				t.Fatalf("compaction: %+v", st)
			}
			m.CheckStore(t, s, 1)
			if q := queue(t, s); len(q) != 0 {
				t.Fatalf("queue after compaction: %x", q)
			}
		})
	}
}

// TestCompactDuplicates: a late point on a flushed timestamp makes the
// compacted row hold that timestamp twice; compaction keeps the newest
// and counts the other as OpenTSDB's CompactionQueue does
// (compaction.duplicates type=identical for the same value, type=variant
// for another value, an int against a float included).
func TestCompactDuplicates(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			s := openStore(t, fs)
			defer s.DB.Close()
			p := newPipeline(t, fs, s, format, 7, "wal")
			defer p.h.Close()
			key := ingesttest.SeriesKey(1, 1, 1)
			m := ingesttest.Model{}
			p.clock = t0 + head.RowSpan + 2*time.Minute.Milliseconds()
			for i := range 10 {
				pt := series.IntPoint(t0+int64(i)*1000, int64(i))
				p.commit(key, pt)
				m.Add(key, pt)
			}
			p.clock += 2 * time.Minute.Milliseconds()
			p.flush(false)
			late := []series.Point{
				series.IntPoint(t0+3000, 3),      // identical
				series.IntPoint(t0+5000, 55),     // variant
				series.Float64Point(t0+6000, 6),  // variant: a float against an int
				series.IntPoint(t0+500_000, 500), // new
			}
			p.commit(key, late...)
			for _, pt := range late {
				m.Add(key, pt)
			}
			p.clock += 2 * time.Minute.Milliseconds()
			p.flush(false)
			st := p.compact(false)
			if st.Compacted != 1 || st.Identical != 1 || st.Variant != 2 {
				t.Fatalf("compaction: %+v, want 1 row, 1 identical and 2 variant duplicates", st)
			}
			if tot := p.c.Stats(); tot.Identical != 1 || tot.Variant != 2 {
				t.Errorf("totals: %+v", tot)
			}
			m.CheckStore(t, s, 1)
		})
	}
}
