package flush

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// dirSize sums the sizes of the files in dir whose names end in suffix.
func dirSize(t *testing.T, dir, suffix string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted by pebble's background cleanup meanwhile
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, suffix) {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// settledSize is dirSize once pebble has deleted the files a compaction
// made obsolete (it does so in the background): two equal readings 50 ms
// apart, or the last reading after 10 s.
func settledSize(t *testing.T, dir, suffix string) int64 {
	n := dirSize(t, dir, suffix)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		m := dirSize(t, dir, suffix)
		if m == n {
			break
		}
		n = m
	}
	return n
}

// TestRetention: rows of a metric older than its retention leave the store
// (a scan finds none), other metrics and the metric's newer rows stay, and
// the engine's directory shrinks once it compacts.
func TestRetention(t *testing.T) {
	ctx := context.Background()
	dbDir := t.TempDir()
	db, err := tsdpebble.Open(dbDir, &tsdpebble.Options{Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spec := storage.TableSpec{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t", MaxVersions: 1}}}
	if err := db.EnsureTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tbl, _ := db.Table(ctx, "tsdb")
	s := &ingesttest.Store{DB: db, Tbl: tbl}
	u, err := uid.Open(ctx, db, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// 40 series of tmp.x (1 day) and 4 of sys.y (forever), 30 hours each.
	now := time.UnixMilli(t0 + 40*head.RowSpan)
	hopts := headOpts()
	hopts.Clock = func() time.Time { return now }
	h := openHead(t, vfs.Default, hopts)
	defer h.Close()
	m := ingesttest.Model{}
	rng := rand.New(rand.NewPCG(31, 31))
	a := h.Appender()
	var tmpKeys, sysKeys [][]byte
	for i := range 44 {
		metric := "tmp.x"
		if i >= 40 {
			metric = "sys.y"
		}
		key, err := u.ResolvePoint(ctx, nil, []byte(metric), []uid.Tag{{Key: []byte("host"), Value: []byte(fmt.Sprint("h", i))}})
		if err != nil {
			t.Fatal(err)
		}
		if i < 40 {
			tmpKeys = append(tmpKeys, key)
		} else {
			sysKeys = append(sysKeys, key)
		}
		for j := range 30 * 120 { // every 30 s
			p := series.Float64Point(t0+int64(j)*30_000, rng.NormFloat64())
			a.AppendKey(key, p)
			m.Add(key, p)
		}
		if err := a.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	f, err := NewFlusher(h, &FlushOptions{Table: tbl, WriterID: 1, RowsPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Flush(ctx, now, true); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	before, sstBefore := settledSize(t, dbDir, ""), settledSize(t, dbDir, ".sst")

	rules, err := retention.Parse("tmp.*:1d,*:forever")
	if err != nil {
		t.Fatal(err)
	}
	job, err := NewRetention(&RetentionOptions{Table: tbl, UIDs: u, Rules: rules, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := job.Run(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Metrics != 2 || st.Expiring != 1 || st.Ranges == 0 || st.Ranges > 20 {
		t.Fatalf("retention run: %+v", st)
	}
	// Cutoff t0+16h: hours 0..15 go; hour 16 (partly expired) and later stay.
	cut := rules.Cutoff("tmp.x", now)
	cut -= cut % head.RowSpan
	if cut != t0+16*head.RowSpan {
		t.Fatalf("cutoff hour %d", (cut-t0)/head.RowSpan)
	}
	l := rowkey.DefaultLayout()
	for b := range l.Buckets() {
		start, stop := l.BucketRange(b, tmpKeys[0][:3], 0, cut-1)
		sc := tbl.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop})
		if sc.Next() {
			t.Fatalf("bucket %d still holds expired row %x", b, sc.Row().Key)
		}
		sc.Close()
	}
	for _, key := range tmpKeys {
		for base := cut; base < t0+30*head.RowSpan; base += head.RowSpan {
			if got, _ := s.Points(t, key, base); len(got) != len(m.Points(string(key), base, base+head.RowSpan)) {
				t.Fatalf("tmp series %x hour %d: %d points left", key, (base-t0)/head.RowSpan, len(got))
			}
		}
	}
	for _, key := range sysKeys {
		for base := int64(t0); base < t0+30*head.RowSpan; base += head.RowSpan {
			if got, _ := s.Points(t, key, base); len(got) != 120 {
				t.Fatalf("sys series %x hour %d: %d points, want 120", key, (base-t0)/head.RowSpan, len(got))
			}
		}
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	after, sstAfter := settledSize(t, dbDir, ""), settledSize(t, dbDir, ".sst")
	t.Logf("store directory: %d bytes before, %d after; sstables %d before, %d after", before, after, sstBefore, sstAfter)
	// About half the points expired; the log files do not shrink.
	if after >= before || sstAfter > sstBefore*6/10 {
		t.Fatalf("store directory %d bytes (sstables %d) before retention, %d (%d) after compaction", before, sstBefore, after, sstAfter)
	}
	// A second run finds nothing left to delete.
	if st, err := job.Run(ctx, now); err != nil || st.Ranges != 0 {
		t.Fatalf("second run: %+v, %v", st, err)
	}
	if _, err := u.Lookup(ctx, uid.Metric, []byte("tmp.x")); err != nil {
		t.Fatalf("retention removed the metric's UID: %v", err)
	}
	job.Start() // its goroutine stops with Stop (goleak checks)
	job.Stop()
}
