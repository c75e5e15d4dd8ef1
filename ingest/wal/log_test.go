package wal

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/series"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rec is one replayed record.
type rec struct {
	seg     uint32
	t       RecordType
	payload string
}

// collector gathers replayed records.
type collector struct{ recs []rec }

func (c *collector) fn(seg uint32, t RecordType, p []byte) error {
	c.recs = append(c.recs, rec{seg, t, string(p)})
	return nil
}

func (c *collector) payloads() []string {
	var out []string
	for _, r := range c.recs {
		out = append(out, r.payload)
	}
	return out
}

func quietOpts(segSize int64) *Options {
	return &Options{SegmentSize: segSize, FsyncInterval: -1, Logger: slog.New(slog.DiscardHandler)}
}

func mustOpen(t *testing.T, fs vfs.FS, opts *Options) (*Log, *collector) {
	t.Helper()
	c := &collector{}
	l, err := Open(fs, "wal", opts, c.fn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l, c
}

// appendPayload appends one samples-type record holding payload.
func appendPayload(l *Log, payload string, sync bool) error {
	for {
		err := l.Append(AppendRecord(nil, TypeSamples, []byte(payload)), l.Segment(), sync)
		if !errors.Is(err, ErrSegmentChanged) {
			return err
		}
	}
}

func TestAppendReopen(t *testing.T) {
	fs := vfs.NewMem()
	l, c := mustOpen(t, fs, quietOpts(0))
	if len(c.recs) != 0 || l.Segment() != 1 {
		t.Fatalf("fresh log: %d records, segment %d", len(c.recs), l.Segment())
	}
	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("record %d", i))
		if err := appendPayload(l, want[i], i%10 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, c = mustOpen(t, fs, quietOpts(0))
	defer l.Close()
	if got := c.payloads(); !slicesEqual(got, want) {
		t.Fatalf("replayed %d records, want %d: %q", len(got), len(want), got)
	}
	if s := l.ReplayStats(); len(s.Damaged) != 0 || s.Segments != 1 || s.Records != 101 {
		t.Fatalf("stats %+v", s)
	}
	if l.Segment() != 2 {
		t.Fatalf("segment after reopen %d, want 2", l.Segment())
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGroupCommit appends from many goroutines; every record must come back
// once, in an order consistent with each goroutine's own order.
func TestGroupCommit(t *testing.T) {
	fs := vfs.NewMem()
	l, _ := mustOpen(t, fs, quietOpts(64<<10))
	const writers, per = 8, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := appendPayload(l, fmt.Sprintf("%d/%04d/%s", w, i, bytes.Repeat([]byte("x"), 100)), i%50 == 0); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	l, c := mustOpen(t, fs, quietOpts(64<<10))
	defer l.Close()
	next := make([]int, writers)
	for _, r := range c.recs {
		var w, i int
		fmt.Sscanf(r.payload, "%d/%04d/", &w, &i)
		if i != next[w] {
			t.Fatalf("writer %d: record %d after %d", w, i, next[w]-1)
		}
		next[w]++
	}
	for w, n := range next {
		if n != per {
			t.Errorf("writer %d: %d records replayed, want %d", w, n, per)
		}
	}
	if s := l.ReplayStats(); s.Segments < 5 {
		t.Errorf("only %d segments for %d KiB of records with 64 KiB segments", s.Segments, writers*per*110/1024)
	}
}

func TestTruncateBefore(t *testing.T) {
	fs := vfs.NewMem()
	l, _ := mustOpen(t, fs, quietOpts(64<<10))
	payload := string(bytes.Repeat([]byte("y"), 30<<10))
	for range 10 {
		if err := appendPayload(l, payload, false); err != nil {
			t.Fatal(err)
		}
	}
	cur := l.Segment()
	if cur < 4 {
		t.Fatalf("segment %d after 300 KiB", cur)
	}
	if err := l.TruncateBefore(cur - 1); err != nil {
		t.Fatal(err)
	}
	segs, _ := listSegments(fs, "wal")
	if len(segs) != 2 || segs[0] != cur-1 || l.FirstSegment() != cur-1 {
		t.Fatalf("segments after truncation: %v, first %d", segs, l.FirstSegment())
	}
	if err := l.TruncateBefore(cur + 5); err != nil {
		t.Fatal(err)
	}
	if segs, _ = listSegments(fs, "wal"); len(segs) != 1 || segs[0] != cur {
		t.Fatalf("the current segment must stay: %v", segs)
	}
	l.Close()
	l, c := mustOpen(t, fs, quietOpts(64<<10))
	defer l.Close()
	if s := l.ReplayStats(); len(s.Damaged) != 0 || s.Segments != 1 {
		t.Fatalf("stats after truncation %+v", s)
	}
	_ = c
}

// TestCrashSynced: every record appended with sync survives a crash clone
// that keeps only synced data, and the clone never reads as damaged beyond a
// torn tail.
func TestCrashSynced(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 20 {
		fs := vfs.NewCrashableMem()
		l, _ := mustOpen(t, fs, quietOpts(64<<10))
		var synced []string
		n := 50 + rng.IntN(200)
		for i := range n {
			p := fmt.Sprintf("%d-%d-%s", iter, i, bytes.Repeat([]byte("z"), rng.IntN(2000)))
			sync := rng.IntN(4) == 0
			if err := appendPayload(l, p, sync); err != nil {
				t.Fatal(err)
			}
			if sync {
				synced = append(synced, p)
			}
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(3) * 50, RNG: rng})
		l.Close()
		kept, _ := listSegments(clone, "wal")
		segs := len(kept)
		l2, c := mustOpen(t, clone, quietOpts(64<<10))
		got := map[string]bool{}
		for _, p := range c.payloads() {
			got[p] = true
		}
		for _, p := range synced {
			if !got[p] {
				t.Fatalf("iter %d: synced record %.20q lost (stats %+v)", iter, p, l2.ReplayStats())
			}
		}
		if s := l2.ReplayStats(); s.Segments < segs {
			t.Fatalf("iter %d: %d segments replayed of the %d the crash kept: %+v", iter, s.Segments, segs, s)
		}
		l2.Close()
	}
}

func TestDiskFull(t *testing.T) {
	fs := &faultFS{FS: vfs.NewMem()}
	l, _ := mustOpen(t, fs, quietOpts(64<<10))
	var acked []string
	add := func(p string) error {
		err := appendPayload(l, p, false)
		if err == nil {
			acked = append(acked, p)
		}
		return err
	}
	for i := range 20 {
		if err := add(fmt.Sprintf("before %d %s", i, bytes.Repeat([]byte("a"), 1000))); err != nil {
			t.Fatal(err)
		}
	}
	fs.full.Store(true)
	for i := range 100 { // enough bytes to need a new segment too
		err := add(fmt.Sprintf("full %d %s", i, bytes.Repeat([]byte("b"), 1000)))
		if !errors.Is(err, ErrDiskFull) || !errors.Is(err, ErrWrite) {
			t.Fatalf("append on a full disk: %v, want ErrDiskFull", err)
		}
	}
	if err := l.Sync(); !errors.Is(err, ErrWrite) {
		t.Fatalf("sync on a full disk: %v", err)
	}
	fs.full.Store(false)
	for i := range 100 {
		if err := add(fmt.Sprintf("after %d %s", i, bytes.Repeat([]byte("c"), 1000))); err != nil {
			t.Fatalf("append after space returned: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, c := mustOpen(t, fs, quietOpts(64<<10))
	defer l.Close()
	if got := c.payloads(); !slicesEqual(got, acked) {
		t.Fatalf("replayed %d records, acknowledged %d", len(got), len(acked))
	}
	if s := l.ReplayStats(); len(s.Damaged) != 0 {
		t.Fatalf("garbage of failed writes read as damage: %+v", s)
	}
}

// segmentBytes returns a segment file's contents.
func segmentBytes(t *testing.T, fs vfs.FS, seg uint32) []byte {
	t.Helper()
	return vfstest.ReadFile(t, fs, fs.PathJoin("wal", SegmentName(seg)))
}

func writeSegment(t *testing.T, fs vfs.FS, seg uint32, b []byte) {
	t.Helper()
	f, err := fs.Create(fs.PathJoin("wal", SegmentName(seg)), writeCategory)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// fiveRecords writes a log of two segments: segment 1 with three records and
// segment 2 (from a reopen) with two.
func fiveRecords(t *testing.T) vfs.FS {
	fs := vfs.NewMem()
	l, _ := mustOpen(t, fs, quietOpts(0))
	for _, p := range []string{"one", "two", "three"} {
		appendPayload(l, p, false)
	}
	l.Close()
	l, _ = mustOpen(t, fs, quietOpts(0))
	for _, p := range []string{"four", "five"} {
		appendPayload(l, p, false)
	}
	l.Close()
	return fs
}

// TestDamage damages one place of a two-segment log: replay skips that
// record (or the bytes up to the next intact one) and keeps everything
// else, later segments included, and logs the place. The next open is clean
// where the damage was the newest segment's tail, which the new segment's
// header excludes; damage before intact records is reported again.
func TestDamage(t *testing.T) {
	hdr := int64(len(AppendRecord(nil, TypeHeader, AppendHeader(nil, 2, 99))))
	recLen := func(p string) int64 { return int64(HeaderSize + len(p)) }
	all := []string{"one", "two", "three", "four", "five"}
	cases := []struct {
		name    string
		seg     uint32
		damage  func(b []byte) []byte
		want    []string
		reason  damage
		offset  int64
		length  int64
		torn    bool
		repeats bool
	}{
		{name: "torn tail", seg: 2, damage: func(b []byte) []byte { return b[:len(b)-2] },
			want: all[:4], reason: damageTorn, offset: hdr + recLen("four"), length: recLen("five") - 2, torn: true},
		{name: "torn frame", seg: 2, damage: func(b []byte) []byte { return b[:len(b)-len("five")-HeaderSize+3] },
			want: all[:4], reason: damageTorn, offset: hdr + recLen("four"), length: 3, torn: true},
		{name: "bad checksum", seg: 2, damage: func(b []byte) []byte { b[len(b)-1] ^= 0x40; return b },
			want: all[:4], reason: damageChecksum, offset: hdr + recLen("four"), length: recLen("five")},
		{name: "unknown type", seg: 2, damage: func(b []byte) []byte {
			return append(b, AppendRecord(nil, RecordType(77), []byte("six"))...)
		}, want: all, reason: damageType, offset: hdr + recLen("four") + recLen("five"), length: recLen("six")},
		{name: "huge length", seg: 2, damage: func(b []byte) []byte { return append(b, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 3) },
			want: all, reason: damageLength, offset: hdr + recLen("four") + recLen("five"), length: HeaderSize},
		{name: "zero tail", seg: 2, damage: func(b []byte) []byte { return append(b, make([]byte, 4096)...) },
			want: all, reason: damageChecksum, offset: hdr + recLen("four") + recLen("five"), length: 4096, torn: true},
		{name: "bad header", seg: 2, damage: func(b []byte) []byte { b[HeaderSize] = 9; return b },
			want: all, reason: damageChecksum, offset: 0, length: hdr, repeats: true},
		{name: "middle segment damage keeps the later one", seg: 1, damage: func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
			want: []string{"one", "two", "four", "five"}, reason: damageChecksum, offset: hdr + recLen("one") + recLen("two"),
			length: recLen("three"), repeats: true},
		{name: "middle segment shorter than recorded", seg: 1, damage: func(b []byte) []byte { return b[:len(b)-1] },
			want: []string{"one", "two", "four", "five"}, reason: damageShort, offset: hdr + recLen("one") + recLen("two"),
			length: recLen("three"), repeats: true},
		{name: "length damaged mid segment", seg: 1, damage: func(b []byte) []byte { b[hdr+1] ^= 0x10; return b },
			want: []string{"two", "three", "four", "five"}, reason: damageTorn, offset: hdr, length: recLen("one"), repeats: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := fiveRecords(t)
			later := segmentBytes(t, fs, 2)
			writeSegment(t, fs, tc.seg, tc.damage(segmentBytes(t, fs, tc.seg)))
			if tc.seg == 2 {
				later = segmentBytes(t, fs, 2)
			}
			var logBuf bytes.Buffer
			opts := quietOpts(0)
			opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
			l, c := mustOpen(t, fs, opts)
			want := Damage{Segment: tc.seg, Offset: tc.offset, Length: tc.length, Reason: string(tc.reason), Torn: tc.torn}
			checkDamage(t, l.ReplayStats(), c.payloads(), tc.want, want)
			level := "level=ERROR"
			if tc.torn {
				level = "level=WARN"
			}
			for _, s := range []string{SegmentName(tc.seg), "bytes=", "offset=", level} {
				if !bytes.Contains(logBuf.Bytes(), []byte(s)) {
					t.Errorf("log does not hold %q: %s", s, logBuf.String())
				}
			}
			// Appends continue in a new segment; no older one is touched.
			appendPayload(l, "after", true)
			l.Close()
			if got := segmentBytes(t, fs, 2); !bytes.Equal(got, later) {
				t.Errorf("segment 2 changed by the reopen")
			}
			l, c = mustOpen(t, fs, quietOpts(0))
			defer l.Close()
			if !tc.repeats {
				want = Damage{}
			}
			checkDamage(t, l.ReplayStats(), c.payloads(), append(slices.Clip(tc.want), "after"), want)
		})
	}
}

// checkDamage compares a replay with the records and the one damaged place
// expected (none when want is zero).
func checkDamage(t *testing.T, s ReplayStats, got, wantRecs []string, want Damage) {
	t.Helper()
	if !slicesEqual(got, wantRecs) {
		t.Errorf("replayed %q, want %q", got, wantRecs)
	}
	var wantList []Damage
	if want != (Damage{}) {
		wantList = []Damage{want}
	}
	if !slices.Equal(s.Damaged, wantList) {
		t.Errorf("damage %+v, want %+v", s.Damaged, wantList)
	}
	corrupt := int64(0)
	if want != (Damage{}) && !want.Torn {
		corrupt = 1
	}
	if s.CorruptRecords != corrupt || s.CorruptBytes != corrupt*want.Length {
		t.Errorf("counted %d corrupt records of %d bytes, want %d of %d", s.CorruptRecords, s.CorruptBytes, corrupt, corrupt*want.Length)
	}
}

func TestEmptySegmentIsClean(t *testing.T) {
	fs := fiveRecords(t)
	writeSegment(t, fs, 3, nil)
	l, c := mustOpen(t, fs, quietOpts(0))
	defer l.Close()
	if s := l.ReplayStats(); len(s.Damaged) != 0 || len(c.recs) != 5 {
		t.Fatalf("empty last segment: %+v, %d records", s, len(c.recs))
	}
}

func TestLockedDir(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(vfs.Default, dir, quietOpts(0), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Open(vfs.Default, dir, quietOpts(0), nil); err == nil {
		t.Fatal("a second Open of one directory succeeded")
	}
}

func TestPeriodicSync(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := quietOpts(0)
	opts.FsyncInterval = 5 * time.Millisecond
	l, _ := mustOpen(t, fs, opts)
	appendPayload(l, "eventually durable", false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		done := l.mu.synced >= l.mu.written
		l.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	clone := fs.CrashClone(vfs.CrashCloneCfg{})
	l.Close()
	l2, c := mustOpen(t, clone, quietOpts(0))
	defer l2.Close()
	if got := c.payloads(); len(got) != 1 || got[0] != "eventually durable" {
		t.Fatalf("after the periodic sync a crash kept %q", got)
	}
}

func TestReplayError(t *testing.T) {
	fs := fiveRecords(t)
	boom := errors.New("boom")
	_, err := Open(fs, "wal", quietOpts(0), func(uint32, RecordType, []byte) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("open: %v, want the replay function's error", err)
	}
	// The failed Open released its lock.
	l, _ := mustOpen(t, fs, quietOpts(0))
	l.Close()
}

func TestClosed(t *testing.T) {
	l, _ := mustOpen(t, vfs.NewMem(), quietOpts(0))
	l.Close()
	if err := appendPayload(l, "late", false); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

var _ = os.ErrNotExist

// FuzzReplay opens a log whose only segment holds arbitrary bytes: Open
// never fails or panics, and after one append the next open delivers the
// same records and the new one, and reports no new damage.
func FuzzReplay(f *testing.F) {
	seg := AppendRecord(nil, TypeHeader, AppendHeader(nil, 1, -1))
	seg = AppendRecord(seg, TypeSamples, encodeSamples([]sample{{1, series.IntPoint(5, 5)}}))
	f.Add(seg)
	f.Add(seg[:len(seg)-1])
	f.Add([]byte{})
	f.Add(make([]byte, 20))
	f.Add(append(append([]byte{}, seg[:15]...), seg...))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := vfs.NewMem()
		fs.MkdirAll("wal", 0o755)
		writeSegment(t, fs, 1, b)
		l, c := mustOpen(t, fs, quietOpts(0))
		first, s1 := c.payloads(), l.ReplayStats()
		if err := appendPayload(l, "after", false); err != nil {
			t.Fatal(err)
		}
		l.Close()
		l, c = mustOpen(t, fs, quietOpts(0))
		defer l.Close()
		if s := l.ReplayStats(); s.TornBytes != 0 || s.CorruptRecords > s1.CorruptRecords || !slicesEqual(c.payloads(), append(first, "after")) {
			t.Fatalf("second open: %+v, %d records, want %d (first open: %+v)", s, len(c.recs), len(first)+1, s1)
		}
	})
}

func TestRotate(t *testing.T) {
	fs := vfs.NewMem()
	l, _ := mustOpen(t, fs, quietOpts(0))
	if err := l.Rotate(); err != nil || l.Segment() != 1 {
		t.Fatalf("rotating an empty segment: %v, segment %d", err, l.Segment())
	}
	appendPayload(l, "one", false)
	if err := l.Rotate(); err != nil || l.Segment() != 2 {
		t.Fatalf("rotate: %v, segment %d", err, l.Segment())
	}
	appendPayload(l, "two", false)
	if err := l.TruncateBefore(l.Segment()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, c := mustOpen(t, fs, quietOpts(0))
	defer l.Close()
	if got := c.payloads(); !slicesEqual(got, []string{"two"}) {
		t.Fatalf("after rotate and truncate: %q", got)
	}
}
