package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

var iterWrites = flag.Int("iterpool.writes", 300, "writes per writer in TestReadsSeeAcknowledgedWrites")

// pooled returns the iterators in the DB's pool.
func pooled(d *DB) []*pebble.Iterator {
	d.iters.mu.Lock()
	defer d.iters.mu.Unlock()
	var out []*pebble.Iterator
	for _, p := range d.iters.free {
		out = append(out, p.it)
	}
	return out
}

// TestReadsSeeAcknowledgedWrites runs writers and readers of a few rows at
// once: every write a writer saw acknowledged before a Get or Scan started
// must be visible to it, however the read's iterator was reused. The
// writers start once every reader has read once, and each reader reads at
// least minReads times, so the reads do not depend on how the scheduler
// shares the machine (under the race detector on 2 busy cores the writers
// once finished before the readers ran 100 reads).
func TestReadsSeeAcknowledgedWrites(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1, noSync: true})
	tb := ensure(t, db, storage.TableSpec{Name: "v", Families: []storage.FamilySpec{{Name: "f"}}})
	const rows, readers = 4, 8
	const minReads = 16
	var acked [rows]atomic.Uint64
	var writers, readWG, started sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, rows+readers)
	started.Add(readers)
	for r := range rows {
		writers.Add(1)
		go func() {
			defer writers.Done()
			started.Wait()
			row := []byte{byte(r)}
			for seq := uint64(1); seq <= uint64(*iterWrites); seq++ {
				c := storage.Cell{Family: "f", Qualifier: []byte("q"), Timestamp: int64(seq) * 1000,
					Value: binary.BigEndian.AppendUint64(nil, seq)}
				if err := tb.Put(ctx, row, []storage.Cell{c}); err != nil {
					errs <- err
					return
				}
				acked[r].Store(seq)
			}
		}()
	}
	var reads atomic.Int64
	for g := range readers {
		readWG.Add(1)
		go func() {
			defer readWG.Done()
			for i := g; ; i++ {
				if i == g+1 {
					started.Done()
				}
				if i-g >= minReads {
					select {
					case <-stop:
						return
					default:
					}
				}
				r := i % rows
				want := acked[r].Load()
				got, err := readNewest(ctx, tb, []byte{byte(r)}, i%3 == 0)
				if err == nil && got < want {
					err = errors.New("stale read")
				}
				if err != nil && !(want == 0 && errors.Is(err, storage.ErrNotFound)) {
					t.Errorf("row %d: read version %d after version %d was acknowledged: %v", r, got, want, err)
					errs <- err
					if i == g {
						started.Done() // the writers must not wait for this reader
					}
					return
				}
				reads.Add(1)
			}
		}()
	}
	writers.Wait()
	close(stop)
	readWG.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if reads.Load() < readers*minReads {
		t.Fatalf("only %d reads ran", reads.Load())
	}
}

// readNewest returns the newest version number of a row's one column, read
// by Get or by a one-row Scan.
func readNewest(ctx context.Context, tb *table, row []byte, scan bool) (uint64, error) {
	ro := storage.ReadOptions{MaxVersions: 1}
	if !scan {
		cells, err := tb.Get(ctx, row, &ro)
		if err != nil {
			return 0, err
		}
		return binary.BigEndian.Uint64(cells[0].Value), nil
	}
	sc := tb.Scan(ctx, &storage.ScanOptions{Start: row, Stop: append(bytes.Clone(row), 0), ReadOptions: ro})
	var v uint64
	n := 0
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			v, n = binary.BigEndian.Uint64(c.Value), n+1
		}
	}
	if err := sc.Close(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, storage.ErrNotFound
	}
	return v, nil
}

// fillPool puts n iterators in the pool by holding n scans open at once.
func fillPool(t *testing.T, tb *table, n int) {
	t.Helper()
	var scans []storage.Scanner
	for range n {
		sc := tb.Scan(context.Background(), nil)
		if !sc.Next() {
			t.Fatalf("scan: %v", sc.Err())
		}
		scans = append(scans, sc)
	}
	for _, sc := range scans {
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(pooled(tb.db)); got != n {
		t.Fatalf("%d pooled iterators, want %d", got, n)
	}
}

func putRows(t *testing.T, tb *table, n, size int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	for r := range n {
		val := make([]byte, size)
		for i := range val {
			val[i] = byte(rng.Uint32()) // incompressible
		}
		cells := []storage.Cell{{Family: "f", Qualifier: []byte("q"), Timestamp: 1000, Value: val}}
		if err := tb.Put(context.Background(), []byte{byte(r)}, cells); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCloseClosesPooledIterators: pebble's Close fails with "leaked
// iterators" if one is open, so Close must close the pooled ones.
func TestCloseClosesPooledIterators(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		db, err := Open(t.TempDir(), &Options{GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		tb := ensure(t, db, storage.TableSpec{Name: "p", Families: []storage.FamilySpec{{Name: "f"}}})
		putRows(t, tb, 3, 8)
		fillPool(t, tb, 3)
		if err := db.Close(); err != nil {
			t.Fatalf("close with pooled iterators: %v", err)
		}
	})
	t.Run("scanner open", func(t *testing.T) {
		// The open scanner's iterator must not enter the closed pool: it
		// is closed when the scanner is, and then pebble closes cleanly.
		dir := t.TempDir()
		db, err := Open(dir, &Options{GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		tb := ensure(t, db, storage.TableSpec{Name: "p", Families: []storage.FamilySpec{{Name: "f"}}})
		putRows(t, tb, 3, 8)
		fillPool(t, tb, 2)
		sc := tb.Scan(context.Background(), nil)
		if !sc.Next() {
			t.Fatal(sc.Err())
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if sc.Next() || !errors.Is(sc.Err(), storage.ErrClosed) {
			t.Fatalf("scan after Close: %v, want ErrClosed", sc.Err())
		}
		_ = sc.Close()
		if err := <-db.closeErr; err != nil {
			t.Fatalf("pebble close after the last scanner: %v", err)
		}
		db2, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIteratorReuse: reads with no write between them share one iterator,
// a write retires it, and a reused iterator keeps nothing of the previous
// read's row, bounds or filters.
func TestIteratorReuse(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "p", Families: []storage.FamilySpec{{Name: "f"}, {Name: "g"}}})
	for r := range 3 {
		cells := []storage.Cell{
			{Family: "f", Qualifier: []byte("a"), Timestamp: 1000, Value: []byte{byte(r), 'f'}},
			{Family: "g", Qualifier: []byte("b"), Timestamp: 1000, Value: []byte{byte(r), 'g'}},
		}
		if err := tb.Put(ctx, []byte{byte(r)}, cells); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.Get(ctx, []byte{0}, &storage.ReadOptions{Families: []string{"g"}}); err != nil {
		t.Fatal(err)
	}
	first := pooled(db)
	if len(first) != 1 {
		t.Fatalf("%d pooled iterators after a Get, want 1", len(first))
	}
	cells, err := tb.Get(ctx, []byte{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || string(cells[0].Value) != "\x01f" || string(cells[1].Value) != "\x01g" {
		t.Fatalf("reused Get of row 1: %v", cells)
	}
	if p := pooled(db); len(p) != 1 || p[0] != first[0] {
		t.Fatal("a Get with no write since the last did not reuse its iterator")
	}
	sc := tb.Scan(ctx, &storage.ScanOptions{Reverse: true})
	var rows []byte
	for sc.Next() {
		rows = append(rows, sc.Row().Key[0])
	}
	if err := sc.Close(); err != nil || string(rows) != "\x02\x01\x00" {
		t.Fatalf("reverse scan on a reused iterator: rows %x, %v", rows, err)
	}
	if _, err := tb.Get(ctx, []byte{9}, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("absent row on a reused iterator: %v", err)
	}
	if err := tb.Put(ctx, []byte{9}, []storage.Cell{{Family: "f", Qualifier: []byte("a"), Value: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	if n := len(pooled(db)); n != 0 {
		t.Fatalf("%d pooled iterators after a write, want 0: they pin memtables and sstables", n)
	}
	if cells, err := tb.Get(ctx, []byte{9}, nil); err != nil || string(cells[0].Value) != "new" {
		t.Fatalf("Get after the write: %v, %v", cells, err)
	}
}

// TestCompactFreesPooledSnapshots: an iterator pooled after a deletion pins
// the sstables the deletion covers; Compact must release it so the files go.
func TestCompactFreesPooledSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openInternal(t, dir, &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "p", Families: []storage.FamilySpec{{Name: "f"}}})
	putRows(t, tb, 64, 64<<10)
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	_, before := dirSize(t, dir)
	if err := tb.DeleteRange(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Get(ctx, []byte{1}, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted row: %v", err)
	}
	if len(pooled(db)) != 1 {
		t.Fatal("the Get left no pooled iterator; the test would prove nothing")
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if z := db.Metrics().Table.ZombieCount; z != 0 {
		t.Fatalf("%d zombie sstables after Compact: a pooled iterator pins them", z)
	}
	_, after := waitDirBelow(t, dir, before/4)
	t.Logf("data files %d bytes before the deletion, %d after Compact", before, after)
}
