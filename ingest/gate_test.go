package ingest

import (
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// TestGateReasons: the operator's mode comes first, then the store's
// refusal; both match storage.ErrReadOnly and name their reason; a nil
// gate never refuses.
func TestGateReasons(t *testing.T) {
	var storeErr error
	g := NewGate(GateOptions{Store: func() error { return storeErr }})
	if err := g.Err(); err != nil {
		t.Fatalf("open gate: %v", err)
	}
	storeErr = storage.ReadOnly(errors.New("disk: 1 MiB free in /data, under min_free_bytes 256 MiB"))
	if err := g.Err(); !errors.Is(err, storage.ErrReadOnly) || err.Error() != "read-only: disk: 1 MiB free in /data, under min_free_bytes 256 MiB" {
		t.Fatalf("store refusing: %v", err)
	}
	g.SetMode("tsd.mode=ro")
	if err := g.Err(); !errors.Is(err, storage.ErrReadOnly) || !storage.IsRetryable(err) || err.Error() != "read-only: tsd.mode=ro" {
		t.Fatalf("mode: %v", err)
	}
	g.SetMode("")
	storeErr = nil
	if err := g.Err(); err != nil {
		t.Fatalf("gate opened again: %v", err)
	}
	if err := (*Gate)(nil).Err(); err != nil {
		t.Fatalf("nil gate: %v", err)
	}
}

// TestGatePausesLoops: while the gate is closed the started flusher and
// compactor loops write nothing and keep every row in the head; once it
// opens, the next rounds write them all.
func TestGatePausesLoops(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.db.Close()
	opts := testOpts(nil)
	start := time.Now()
	opts.Clock = func() time.Time { return time.UnixMilli(t0 + 10*RowSpan).Add(time.Since(start)) }
	h := mustOpenHead(t, fs, opts)
	defer h.Close()
	g := NewGate(GateOptions{})
	g.SetMode("tsd.mode=ro")
	f, err := h.NewFlusher(&FlushOptions{Table: s.tbl, Meta: s.meta, Format: uid.FormatDense, WriterID: 4,
		Grace: time.Millisecond, Spread: -1, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.NewCompactor(&CompactOptions{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	a := h.Appender()
	for i, key := range testKeys(20) {
		p := series.IntPoint(t0+int64(i)*1000, int64(i))
		if _, err := a.AppendKey(key, p); err != nil {
			t.Fatal(err)
		}
		m.add(key, p)
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	f.Start(time.Millisecond)
	c.Start()
	defer c.Stop()
	defer f.Stop()
	time.Sleep(50 * time.Millisecond) // fifty rounds
	if st := f.Stats(); st.Rows != 0 {
		t.Fatalf("flushed %d rows while read-only", st.Rows)
	}
	m.check(t, h)
	g.SetMode("")
	deadline := time.Now().Add(10 * time.Second)
	for f.Stats().Rows < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("rows not flushed after the gate opened: %+v", f.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	m.checkStore(t, s, 1)
}
