package wal

import (
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/internal/invariants"
)

var (
	flipSeed  = flag.Uint64("wal.corrupt.seed", 0, "seed of the WAL byte-flip tests (0: time-based)")
	flipCount = flag.Int("wal.corrupt.flips", raceFlips(200), "single byte flips per segment in TestReplayByteFlips (30 under the race detector)")
)

// raceFlips is n, or 30 under the race detector, where a replay is ten
// times slower and the race step checks data races, not damage.
func raceFlips(n int) int {
	if invariants.RaceEnabled {
		return 30
	}
	return n
}

// flipRNG returns the byte-flip tests' generator, logging its seed.
func flipRNG(t *testing.T) *rand.Rand {
	seed := *flipSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-wal.corrupt.seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 17))
}

// written is one record as the writer framed it, located in its segment.
type written struct {
	seg      uint32
	off, len int64 // framed
	t        RecordType
	payload  string
}

// writeFlipLog writes records of random types and sizes through the real
// writer, reopening it a few times, into at least four segments, and returns
// the file system and the records in log order (segment headers included).
func writeFlipLog(t *testing.T, rng *rand.Rand) (vfs.FS, []written) {
	fs := vfs.NewMem()
	for round := range 3 {
		l, _ := mustOpen(t, fs, quietOpts(64<<10))
		for i := range 150 + rng.IntN(60) {
			n := rng.IntN(200)
			if rng.IntN(8) == 0 {
				n = rng.IntN(12 << 10)
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte(rng.IntN(256))
			}
			typ := []RecordType{TypeSeries, TypeSamples, TypeDelete}[rng.IntN(3)]
			if err := appendTyped(l, typ, fmt.Sprintf("%d/%d/%s", round, i, p), i%9 == 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	recs := layout(t, fs)
	if last := recs[len(recs)-1].seg; last < 4 {
		t.Fatalf("only %d segments", last)
	}
	return fs, recs
}

func appendTyped(l *Log, typ RecordType, payload string, sync bool) error {
	for {
		err := l.Append(AppendRecord(nil, typ, []byte(payload)), l.Segment(), sync)
		if err != ErrSegmentChanged {
			return err
		}
	}
}

// layout frames every segment of an undamaged log.
func layout(t *testing.T, fs vfs.FS) []written {
	segs, err := listSegments(fs, "wal")
	if err != nil {
		t.Fatal(err)
	}
	var out []written
	for _, seg := range segs {
		b := segmentBytes(t, fs, seg)
		for off := 0; off < len(b); {
			n, _ := frameLength(b[off:])
			out = append(out, written{seg: seg, off: int64(off), len: int64(HeaderSize + n),
				t: RecordType(b[off+8]), payload: string(b[off+HeaderSize : off+HeaderSize+n])})
			off += HeaderSize + n
		}
	}
	return out
}

// copyLog copies the log's files into a fresh file system.
func copyLog(t *testing.T, fs vfs.FS) vfs.FS {
	out := vfs.NewMem()
	if err := out.MkdirAll("wal", 0o755); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.List("wal")
	for _, name := range names {
		if _, ok := parseSegmentName(name); ok {
			seg, _ := parseSegmentName(name)
			writeSegment(t, out, seg, segmentBytes(t, fs, seg))
		}
	}
	return out
}

// files returns the contents of every segment.
func files(t *testing.T, fs vfs.FS) map[uint32][]byte {
	segs, _ := listSegments(fs, "wal")
	m := map[uint32][]byte{}
	for _, s := range segs {
		m[s] = segmentBytes(t, fs, s)
	}
	return m
}

// flip xors the byte at off of segment seg with a random non-zero value.
func flip(t *testing.T, fs vfs.FS, rng *rand.Rand, seg uint32, off int64) {
	b := segmentBytes(t, fs, seg)
	b[off] ^= byte(1 + rng.IntN(255))
	writeSegment(t, fs, seg, b)
}

// touched returns the index of the record holding byte off of seg.
func touched(recs []written, seg uint32, off int64) int {
	for i, r := range recs {
		if r.seg == seg && off >= r.off && off < r.off+r.len {
			return i
		}
	}
	return -1
}

// TestReplayByteFlips flips one byte at a time, at random places of each
// segment of a log written by the real writer: replay skips exactly the
// record holding the byte (its framed bytes, named in one log line, counted
// once), delivers every other record, and the reopened log appends to a new
// segment without changing any existing file.
func TestReplayByteFlips(t *testing.T) {
	rng := flipRNG(t)
	orig, recs := writeFlipLog(t, rng)
	sizes := files(t, orig)
	newest := recs[len(recs)-1].seg
	for seg, b := range sizes {
		for range *flipCount {
			off := int64(rng.IntN(len(b)))
			fs := copyLog(t, orig)
			flip(t, fs, rng, seg, off)
			checkOneFlip(t, fs, recs, seg, off, seg == newest)
			if t.Failed() {
				t.Fatalf("segment %d, byte %d", seg, off)
			}
		}
	}
}

// checkOneFlip replays a log with one flipped byte and checks the result.
func checkOneFlip(t *testing.T, fs vfs.FS, recs []written, seg uint32, off int64, newest bool) {
	before := files(t, fs)
	var logBuf bytes.Buffer
	opts := quietOpts(64 << 10)
	opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	l, c := mustOpen(t, fs, opts)
	hit := touched(recs, seg, off)
	r := recs[hit]
	if got, want := c.recs, dataRecords(recs, hit); !slices.Equal(got, want) {
		t.Errorf("replayed %d records, want all %d but the damaged one (%s at %d, %d bytes)", len(got), len(want), r.t, r.off, r.len)
	}
	s := l.ReplayStats()
	want := Damage{Segment: seg, Offset: r.off, Length: r.len, Reason: s.firstReason()}
	// A damaged length in the newest segment's last record that reaches
	// past the end of the file reads as an interrupted write.
	last := hit == len(recs)-1
	want.Torn = newest && last && off < r.off+4 && want.Reason == string(damageTorn)
	if !slices.Equal(s.Damaged, []Damage{want}) {
		t.Errorf("damage %+v, want %+v", s.Damaged, want)
	}
	if want.Torn && (s.CorruptRecords != 0 || s.TornBytes != r.len) || !want.Torn && (s.CorruptRecords != 1 || s.CorruptBytes != r.len) {
		t.Errorf("counted %d corrupt records of %d bytes and %d torn bytes", s.CorruptRecords, s.CorruptBytes, s.TornBytes)
	}
	line := fmt.Sprintf("segment=wal/%s offset=%d bytes=%d", SegmentName(seg), r.off, r.len)
	if !bytes.Contains(logBuf.Bytes(), []byte(line)) || bytes.Count(logBuf.Bytes(), []byte("\n")) != 1 {
		t.Errorf("log is not one line naming %q:\n%s", line, logBuf.String())
	}
	checkAppendsAfter(t, fs, l, before)
}

// firstReason is the reason of the first damaged place, or "".
func (s ReplayStats) firstReason() string {
	if len(s.Damaged) == 0 {
		return ""
	}
	return s.Damaged[0].Reason
}

// dataRecords returns what replay should deliver: every record but the
// headers and record skip.
func dataRecords(recs []written, skip int) []rec {
	var out []rec
	for i, r := range recs {
		if i != skip && r.t != TypeHeader {
			out = append(out, rec{r.seg, r.t, r.payload})
		}
	}
	return out
}

// checkAppendsAfter appends to the reopened log l and checks that every
// file that existed before is unchanged and the appends went to a segment
// numbered after all of them.
func checkAppendsAfter(t *testing.T, fs vfs.FS, l *Log, before map[uint32][]byte) {
	t.Helper()
	var maxSeg uint32
	for s := range before {
		maxSeg = max(maxSeg, s)
	}
	if l.Segment() != maxSeg+1 {
		t.Errorf("appends go to segment %d, want %d", l.Segment(), maxSeg+1)
	}
	if err := appendTyped(l, TypeSamples, "after", true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	after := files(t, fs)
	for s, b := range before {
		if !bytes.Equal(after[s], b) {
			t.Errorf("segment %d changed: %d bytes, was %d", s, len(after[s]), len(b))
		}
	}
}

// TestReplayMultiFlips flips several bytes in one or more segments at once:
// replay never fails or panics, delivers only records that were written, in
// order, loses no record whose neighbours are intact, and changes no file.
func TestReplayMultiFlips(t *testing.T) {
	rng := flipRNG(t)
	orig, recs := writeFlipLog(t, rng)
	sizes := files(t, orig)
	segs := slices.Sorted(func(yield func(uint32) bool) {
		for s := range sizes {
			if !yield(s) {
				return
			}
		}
	})
	for iter := range 40 {
		fs := copyLog(t, orig)
		hit := map[int]bool{}
		var where []string
		for range 2 + rng.IntN(6) {
			seg := segs[rng.IntN(len(segs))]
			if iter%2 == 0 {
				seg = segs[iter/2%len(segs)] // all in one segment
			}
			off := int64(rng.IntN(len(sizes[seg])))
			flip(t, fs, rng, seg, off)
			hit[touched(recs, seg, off)] = true
			where = append(where, fmt.Sprintf("%d@%d", seg, off))
		}
		before := files(t, fs)
		l, c := mustOpen(t, fs, quietOpts(64<<10))
		checkMulti(t, recs, hit, c.recs)
		if s := l.ReplayStats(); s.CorruptRecords+int64(len(s.Damaged)) == 0 || s.CorruptRecords > int64(len(hit)) {
			t.Errorf("%d damaged places counted for %d damaged records", s.CorruptRecords, len(hit))
		}
		checkAppendsAfter(t, fs, l, before)
		if t.Failed() {
			t.Fatalf("iteration %d, flips %v", iter, where)
		}
	}
}

// checkMulti checks a replay after several flips against the records
// written: got must be a subsequence of them holding every untouched
// record whose neighbours in its segment are untouched.
func checkMulti(t *testing.T, recs []written, hit map[int]bool, got []rec) {
	t.Helper()
	j := 0
	for i, r := range recs {
		if r.t == TypeHeader {
			continue
		}
		if j < len(got) && got[j] == (rec{r.seg, r.t, r.payload}) {
			j++
			continue
		}
		near := hit[i] || (i > 0 && hit[i-1] && recs[i-1].seg == r.seg) || (i+1 < len(recs) && hit[i+1] && recs[i+1].seg == r.seg)
		if !near {
			t.Errorf("record %d (segment %d offset %d) lost, its neighbours intact", i, r.seg, r.off)
		}
	}
	if j != len(got) {
		t.Errorf("replay delivered %d records not written, or out of order", len(got)-j)
	}
}
