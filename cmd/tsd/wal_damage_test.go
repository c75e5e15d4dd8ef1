package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/wal"
)

var walSeed = flag.Uint64("wal.corrupt.seed", 0, "seed of TestDaemonDamagedLog's byte flips (0: time-based)")

// walFrame is one record of a segment file.
type walFrame struct {
	off, len int
	t        wal.RecordType
	payload  []byte
}

func walFrames(t *testing.T, b []byte) []walFrame {
	t.Helper()
	var out []walFrame
	for off := 0; off < len(b); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		out = append(out, walFrame{off, wal.HeaderSize + n, wal.RecordType(b[off+8]), b[off+wal.HeaderSize : off+wal.HeaderSize+n]})
		off += wal.HeaderSize + n
	}
	return out
}

// lostPoints returns the timestamps of the points a replay of frames loses
// when the records skip are damaged: their own samples, and those of intact
// records whose series only a damaged record defined.
func lostPoints(frames []walFrame, skip map[int]bool) map[int64]bool {
	lost := map[int64]bool{}
	ids := map[uint64]bool{}
	for i, f := range frames {
		switch f.t {
		case wal.TypeSeries:
			var d wal.SeriesDecoder
			for d.Reset(f.payload); ; {
				id, _, ok := d.Next()
				if !ok {
					break
				}
				if !skip[i] {
					ids[id] = true
				}
			}
		case wal.TypeSamples, wal.TypeSamplesMs:
			// A batch holding a point stamped in milliseconds on a whole
			// second is a TypeSamplesMs record: its points depend on the
			// series records all the same.
			var d wal.SamplesDecoder
			for resetSamples(&d, f); ; {
				id, p, ok := d.Next()
				if !ok {
					break
				}
				if skip[i] || !ids[id] {
					lost[p.T] = true
				}
			}
		}
	}
	return lost
}

// resetSamples starts d on the samples record f, of either type.
func resetSamples(d *wal.SamplesDecoder, f walFrame) {
	if f.t == wal.TypeSamplesMs {
		d.ResetMs(f.payload)
		return
	}
	d.Reset(f.payload)
}

// walPuts posts n synced puts of two series each, three points a series,
// at timestamps from *next on, one millisecond apart.
func walPuts(t *testing.T, d *daemon, n int, next *int64, sent map[int64]int) {
	for i := range n {
		var pts []map[string]any
		for _, s := range []int{i % 6, (i + 1) % 6} {
			for range 3 {
				pts = append(pts, map[string]any{"metric": "wal.damage", "timestamp": *next, "value": s,
					"tags": map[string]string{"k": "s" + strconv.Itoa(s)}})
				sent[*next] = s
				*next++
			}
		}
		d.putJSON(t, pts)
	}
}

// TestDaemonDamagedLog kills a daemon twice under writes, so its log holds
// two segments, damages a series record and a samples record of the first
// (seeded choice of records and bytes), and restarts it: the daemon serves
// every point but those of the damaged samples record and those whose
// series only the damaged series record defined, counts both records and
// those points in /metrics, names each damaged place in an error line, and
// leaves both segments as they were while it takes new writes.
func TestDaemonDamagedLog(t *testing.T) {
	seed := *walSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-wal.corrupt.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	data := t.TempDir()
	args := []string{"--data", data, "--tsd.storage.flush.grace=24h"}
	next, sent := time.Now().Add(-10*time.Minute).UnixMilli(), map[int64]int{}
	for range 2 {
		d := startDaemon(t, args...)
		walPuts(t, d, 20, &next, sent)
		d.Kill()
	}
	dir := filepath.Join(data, "wal")
	seg1, seg2 := filepath.Join(dir, wal.SegmentName(1)), filepath.Join(dir, wal.SegmentName(2))
	b, err := os.ReadFile(seg1)
	if err != nil {
		t.Fatal(err)
	}
	frames := walFrames(t, bytes.Clone(b)) // the model reads the bytes as written
	skip, offsets := map[int]bool{}, []int{}
	for _, typ := range []wal.RecordType{wal.TypeSeries, wal.TypeSamples} {
		var of []int
		for i, f := range frames[:len(frames)-1] {
			// Not beside the other damaged record: a damaged length makes
			// the reader resynchronise at the next valid frame, so two
			// adjacent damaged records are one damaged region.
			if f.t == typ && !skip[i] && !skip[i-1] && !skip[i+1] {
				of = append(of, i)
			}
		}
		i := of[rng.IntN(len(of))]
		skip[i] = true
		off := frames[i].off + rng.IntN(frames[i].len)
		b[off] ^= byte(1 + rng.IntN(255))
		offsets = append(offsets, frames[i].off)
	}
	lost := lostPoints(frames, skip)
	if err := os.WriteFile(seg1, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before2, _ := os.ReadFile(seg2)

	d := startDaemon(t, args...)
	checkDamagedLogLines(t, d, seg1, offsets)
	checkDamagedLogPoints(t, d, sent, lost)
	if got := d.stat(t, "tsd.wal.corrupt-records"); got != 2 {
		t.Errorf("tsd.wal.corrupt-records = %d, want 2", got)
	}
	if got := d.stat(t, "tsd.wal.dropped-points"); got != int64(len(lost))-int64(countSamples(frames, skip)) {
		t.Errorf("tsd.wal.dropped-points = %d, want %d", got, int64(len(lost))-int64(countSamples(frames, skip)))
	}
	if _, body := d.Get(t, "/metrics"); !strings.Contains(body, "tsd_wal_corrupt_records_total 2\n") {
		t.Errorf("/metrics lacks tsd_wal_corrupt_records_total 2")
	}
	walPuts(t, d, 3, &next, sent)
	for name, want := range map[string][]byte{seg1: b, seg2: before2} {
		if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
			t.Errorf("%s changed after the restart and new writes", name)
		}
	}
}

// countSamples counts the samples inside the damaged records.
func countSamples(frames []walFrame, skip map[int]bool) int {
	n := 0
	for i := range skip {
		if t := frames[i].t; t == wal.TypeSamples || t == wal.TypeSamplesMs {
			var d wal.SamplesDecoder
			for resetSamples(&d, frames[i]); ; n++ {
				if _, _, ok := d.Next(); !ok {
					break
				}
			}
		}
	}
	return n
}

// checkDamagedLogLines checks the start-up log names each damaged place
// in one error line.
func checkDamagedLogLines(t *testing.T, d *daemon, seg string, offsets []int) {
	t.Helper()
	logs := d.Logs.String()
	for _, off := range offsets {
		want := fmt.Sprintf("segment=%s offset=%d ", seg, off)
		if n := strings.Count(logs, want); n != 1 || !strings.Contains(logs, "level=ERROR msg=\"wal: damaged record skipped") {
			t.Errorf("%d error lines name %q:\n%s", n, want, logs)
		}
	}
}

// checkDamagedLogPoints checks the daemon serves exactly the points sent
// but lost.
func checkDamagedLogPoints(t *testing.T, d *daemon, sent map[int64]int, lost map[int64]bool) {
	t.Helper()
	ts := slices.Sorted(func(yield func(int64) bool) {
		for k := range sent {
			if !yield(k) {
				return
			}
		}
	})
	dps := d.queryDPS(t, "sum:wal.damage%7Bk=*%7D", ts[0], ts[len(ts)-1])
	got := 0
	for _, tm := range ts {
		s := sent[tm]
		v, ok := dps["s"+strconv.Itoa(s)][strconv.FormatInt(tm, 10)]
		switch {
		case ok && lost[tm]:
			t.Errorf("point %d of s%d was in a damaged place but is served", tm, s)
		case !ok && !lost[tm]:
			t.Errorf("point %d of s%d lost", tm, s)
		case ok && v != float64(s):
			t.Errorf("point %d of s%d = %v", tm, s, v)
		}
		if ok {
			got++
		}
	}
	t.Logf("%d points sent, %d served, %d in damaged places or orphaned", len(sent), got, len(lost))
}
