package head

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/internal/vfstest"
	"github.com/tsd-db/tsd/series"
)

var (
	flipSeed  = flag.Uint64("wal.corrupt.seed", 0, "seed of TestHeadReplayByteFlips (0: time-based)")
	flipCount = flag.Int("wal.corrupt.flips", raceFlips(200), "random single byte flips per segment in TestHeadReplayByteFlips, beside 20 on series records (5 under the race detector)")
)

// raceFlips is n, or 5 under the race detector, where a replay is ten
// times slower and the race step checks data races, not damage (the
// test step ran the 200): 50 replays a segment took 26 s there.
func raceFlips(n int) int {
	if invariants.RaceEnabled {
		return 5
	}
	return n
}

// logRecord is one record of a head's log, as the writer framed it.
type logRecord struct {
	seg      uint32
	off, len int64
	t        wal.RecordType
	payload  []byte
}

// headLog returns the records of every segment of the undamaged log in dir.
func headLog(t *testing.T, fs vfs.FS) []logRecord {
	t.Helper()
	var out []logRecord
	for _, name := range segmentNames(t, fs) {
		var seg uint32
		fmt.Sscanf(name, "%d.wal", &seg)
		b := vfstest.ReadFile(t, fs, "wal/"+name)
		for off := 0; off < len(b); {
			n := int(binary.LittleEndian.Uint32(b[off:]))
			out = append(out, logRecord{seg: seg, off: int64(off), len: int64(wal.HeaderSize + n),
				t: wal.RecordType(b[off+8]), payload: b[off+wal.HeaderSize : off+wal.HeaderSize+n]})
			off += wal.HeaderSize + n
		}
	}
	return out
}

func segmentNames(t *testing.T, fs vfs.FS) []string {
	names, err := fs.List("wal")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".wal") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// logFiles returns the contents of every segment by name.
func logFiles(t *testing.T, fs vfs.FS) map[string][]byte {
	m := map[string][]byte{}
	for _, n := range segmentNames(t, fs) {
		m[n] = vfstest.ReadFile(t, fs, "wal/"+n)
	}
	return m
}

// copyHeadLog copies a head's log into a fresh file system.
func copyHeadLog(t *testing.T, fs vfs.FS) vfs.FS {
	out := vfs.NewMem()
	out.MkdirAll("wal", 0o755)
	for n, b := range logFiles(t, fs) {
		vfstest.WriteFile(t, out, "wal/"+n, b)
	}
	return out
}

// replayModel is what a head rebuilt from recs without record skip holds:
// every sample of an intact samples record whose series an intact series
// record defined earlier in its segment, and the count of the others.
func replayModel(t *testing.T, recs []logRecord, skip int) (ingesttest.Model, int64) {
	m, orphans := ingesttest.Model{}, int64(0)
	ids := map[uint64][]byte{}
	var seg uint32
	for i, r := range recs {
		if r.seg != seg {
			clear(ids)
			seg = r.seg
		}
		if i == skip {
			continue
		}
		switch r.t {
		case wal.TypeSeries:
			var d wal.SeriesDecoder
			for d.Reset(r.payload); ; {
				id, key, ok := d.Next()
				if !ok {
					break
				}
				ids[id] = key
			}
		case wal.TypeSamples:
			var d wal.SamplesDecoder
			for d.Reset(r.payload); ; {
				id, p, ok := d.Next()
				if !ok {
					break
				}
				if key := ids[id]; key != nil {
					m.Add(key, p)
				} else {
					orphans++
				}
			}
		}
	}
	return m, orphans
}

// writeFlipHead commits random points of 60 series through a real head,
// reopening it twice, so the log has several segments, each defining the
// series it uses; it returns the points written.
func writeFlipHead(t *testing.T, fs vfs.FS, rng *rand.Rand) ingesttest.Model {
	m := ingesttest.Model{}
	keys := ingesttest.Keys(60)
	next := map[int]int64{}
	for round := range 3 {
		h := mustOpenHead(t, fs, testOpts(nil))
		a := h.Appender()
		for c := range 500 {
			for range 1 + rng.IntN(6) {
				s := rng.IntN(min(len(keys), 10+c/4+round*40))
				for range 1 + rng.IntN(4) {
					p := ingesttest.RandomPoint(rng, t0+next[s]*1000)
					next[s]++
					if _, err := a.AppendKey(keys[s], p); err != nil {
						t.Fatal(err)
					}
					m.Add(keys[s], p)
				}
			}
			if err := a.Commit(c%50 == 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestHeadReplayByteFlips writes points through a real head and log, then,
// one copy at a time, flips one random byte of one segment and reopens the
// head: it holds every point of every record the flip did not touch, except
// those whose series was defined only in the damaged record, which it
// counts exactly and names in one error line; the log counts one damaged
// record; and new writes go to a new segment, leaving every file as it was.
func TestHeadReplayByteFlips(t *testing.T) {
	seed := *flipSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-wal.corrupt.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	orig := vfs.NewMem()
	written := writeFlipHead(t, orig, rng)
	recs := headLog(t, orig)
	if m, orphans := replayModel(t, recs, -1); orphans != 0 || !maps.EqualFunc(m, written, maps.Equal) {
		t.Fatalf("the log does not hold the points written (%d orphans)", orphans)
	}
	files := logFiles(t, orig)
	if len(files) < 3 {
		t.Fatalf("only %d segments", len(files))
	}
	orphaned := 0
	for name, b := range files {
		for i := range *flipCount + 20 {
			off := rng.IntN(len(b))
			if i >= *flipCount { // the last flips hit series records
				off = seriesByte(rng, recs, name)
			}
			fs := copyHeadLog(t, orig)
			damaged := slices.Clone(b)
			damaged[off] ^= byte(1 + rng.IntN(255))
			vfstest.WriteFile(t, fs, "wal/"+name, damaged)
			if checkHeadFlip(t, fs, recs, name, int64(off)) {
				orphaned++
			}
			if t.Failed() {
				t.Fatalf("segment %s, byte %d", name, off)
			}
		}
	}
	t.Logf("%d segments, %d flips, %d of them orphaned points", len(files), len(files)*(*flipCount+20), orphaned)
	if orphaned < len(files)*5 {
		t.Errorf("only %d flips orphaned points", orphaned)
	}
}

// seriesByte returns the offset of a random byte of a random series record
// of segment name.
func seriesByte(rng *rand.Rand, recs []logRecord, name string) int {
	var in []logRecord
	for _, r := range recs {
		if fmt.Sprintf("%010d.wal", r.seg) == name && r.t == wal.TypeSeries {
			in = append(in, r)
		}
	}
	r := in[rng.IntN(len(in))]
	return int(r.off) + rng.IntN(int(r.len))
}

// checkHeadFlip reopens a head whose log has one flipped byte at off of
// segment name and checks it; it reports whether points were orphaned.
func checkHeadFlip(t *testing.T, fs vfs.FS, recs []logRecord, name string, off int64) bool {
	var seg uint32
	fmt.Sscanf(name, "%d.wal", &seg)
	hit := slices.IndexFunc(recs, func(r logRecord) bool { return r.seg == seg && off >= r.off && off < r.off+r.len })
	want, orphans := replayModel(t, recs, hit)
	before := logFiles(t, fs)
	var logBuf bytes.Buffer
	opts := testOpts(nil)
	opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	opts.WAL.Logger = opts.Logger
	h := mustOpenHead(t, fs, opts)
	all, _ := replayModel(t, recs, -1)
	for key := range all {
		if got, w := h.AppendPoints(nil, []byte(key), 0, 1<<62), want.Points(key, 0, 1<<62); !slices.Equal(got, w) {
			t.Errorf("series %x: %d points, want %d (record %d, %s, hit)", key, len(got), len(w), hit, recs[hit].t)
		}
	}
	s := h.ReplayStats()
	if s.OrphanSamples != orphans || s.BadRecords != 0 {
		t.Errorf("%d orphan samples and %d bad records counted, want %d and 0", s.OrphanSamples, s.BadRecords, orphans)
	}
	last := hit == len(recs)-1
	torn := len(s.WAL.Damaged) == 1 && s.WAL.Damaged[0].Torn
	if torn && !(last && off < recs[hit].off+4) || !torn && s.WAL.CorruptRecords != 1 {
		t.Errorf("log damage %+v", s.WAL.Damaged)
	}
	points := fmt.Sprintf("level=ERROR msg=\"ingest: points dropped at replay, their series record was damaged or unreadable\" segment=wal/%s points=%d ", name, orphans)
	if (orphans > 0) != strings.Contains(logBuf.String(), points) {
		t.Errorf("log does not say %d points were dropped:\n%s", orphans, logBuf.String())
	}
	a := h.Appender()
	a.AppendKey(ingesttest.SeriesKey(9, 9, 9), series.IntPoint(t0, 1))
	if err := a.Commit(true); err != nil {
		t.Fatal(err)
	}
	h.Close()
	after := logFiles(t, fs)
	for n, b := range before {
		if !bytes.Equal(after[n], b) {
			t.Errorf("segment %s changed after reopening and writing", n)
		}
	}
	return orphans > 0
}
