package head

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/series"
)

// roundTrip encodes pts (one row, increasing T) and decodes them back.
func roundTrip(t testing.TB, base int64, pts []series.Point) {
	t.Helper()
	var c rowChunk
	for _, p := range pts {
		c.append(base, p)
	}
	var it chunkIter
	it.reset(c.w.b, c.n, base)
	for i, want := range pts {
		if !it.next() {
			t.Fatalf("point %d of %d missing (bad=%v)", i, len(pts), it.bad)
		}
		if it.p != want {
			t.Fatalf("point %d: got %+v, want %+v", i, it.p, want)
		}
	}
	if it.next() {
		t.Fatalf("extra point %+v", it.p)
	}
	it.reset(c.w.b, c.n, base)
	got, ok := it.appendAll(nil)
	if !ok || !slices.Equal(got, pts) {
		t.Fatalf("appendAll: ok=%v, %d points, want %d equal to the appended", ok, len(got), len(pts))
	}
}

// sameDecode checks that appendAll decodes b as next does: the same
// points, and the same verdict on bytes rowChunk did not write.
func sameDecode(t *testing.T, b []byte, n uint32) {
	t.Helper()
	var it chunkIter
	it.reset(b, n, 0)
	var want []series.Point
	for it.next() {
		want = append(want, it.p)
	}
	bad := it.bad
	it.reset(b, n, 0)
	got, ok := it.appendAll(nil)
	if ok == bad || !slices.Equal(got, want) {
		t.Fatalf("appendAll: ok=%v %d points; next: bad=%v %d points of %d", ok, len(got), bad, len(want), n)
	}
}

func TestChunkRoundTrip(t *testing.T) {
	base := int64(1_767_225_600_000)
	rng := rand.New(rand.NewPCG(3, 4))
	var pts []series.Point
	tm := base
	for i := range 3000 {
		tm += 1 + int64(rng.IntN(3))*int64(rng.IntN(2000)) // repeats, jitter, big jumps
		switch i % 7 {
		case 0, 1:
			pts = append(pts, series.IntPoint(tm, int64(i*3)))
		case 2:
			pts = append(pts, series.IntPoint(tm, rng.Int64()-rng.Int64()))
		case 3:
			pts = append(pts, series.Float32Point(tm, float32(rng.NormFloat64())))
		case 4, 5:
			pts = append(pts, series.Float64Point(tm, math.Round(rng.NormFloat64()*100)/100))
		default:
			pts = append(pts, series.Point{T: tm, Bits: series.StaleNaN, Kind: series.Float64})
		}
	}
	if tm >= base+RowSpan {
		t.Fatalf("test points overflow the row: %d", tm-base)
	}
	roundTrip(t, base, pts)
	roundTrip(t, base, []series.Point{series.IntPoint(base+RowSpan-1, math.MinInt64)})
	roundTrip(t, base, []series.Point{series.IntPoint(base, math.MaxInt64), series.IntPoint(base+RowSpan-1, math.MinInt64), series.IntPoint(base+RowSpan-1+0, 0)}[:2])
}

// TestChunkIntRuns round-trips integer rows whose points appendAll reads
// several to a load (appendIntRun): changes on every bucket boundary,
// runs broken by a new interval, a float, a millisecond point, and rows
// of every length, so that runs end at every bit of the stream's last
// word.
func TestChunkIntRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	deltas := []int64{0, 0, 0, 1, -1, -2, 2, 31, -32, 32, -33, 1 << 19, -1 << 19, 1 << 40}
	for rows := range 300 {
		var pts []series.Point
		tm, v := int64(0), int64(50)
		n := 1 + rows%97
		for i := range n {
			tm += 10_000
			if i%41 == 40 {
				tm += int64(rng.IntN(5000)) // a new interval
			}
			v += deltas[rng.IntN(len(deltas))]
			p := series.IntPoint(tm, v)
			switch {
			case i%53 == 52:
				p = series.Float64Point(tm, float64(v)/3)
			case i%67 == 66:
				p.Ms = true
			}
			pts = append(pts, p)
		}
		roundTrip(t, 0, pts)
	}
}

// TestChunkSize pins the compression of a regular series: a 10 s gauge
// in integer percent takes a few bits per point.
func TestChunkSize(t *testing.T) {
	var c rowChunk
	v := int64(50)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range 360 {
		v = min(max(v+int64(math.Round(rng.NormFloat64())), 0), 100)
		c.append(0, series.IntPoint(int64(i)*10_000, v))
	}
	bpp := float64(len(c.w.b)) / 360
	if bpp > 0.7 {
		t.Fatalf("%.3f bytes per point for a regular integer gauge", bpp)
	}
	t.Logf("%.3f bytes per point", bpp)
}

// FuzzChunk round-trips rows built from arbitrary bytes, and decodes
// arbitrary bytes as a chunk without panicking.
func FuzzChunk(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 5, 2, 0x40, 0, 0, 0, 0, 0, 0, 0})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		sameDecode(t, b, 100)
		sameDecode(t, b, uint32(len(b))%200)
		var pts []series.Point
		tm := int64(0)
		for len(b) >= 11 {
			tm += int64(binary.LittleEndian.Uint16(b) % 4000)
			if tm >= RowSpan {
				break
			}
			if len(pts) > 0 && tm == pts[len(pts)-1].T {
				tm++
			}
			pts = append(pts, series.Point{T: tm, Bits: binary.LittleEndian.Uint64(b[2:]), Kind: series.Kind(b[10] % 3)})
			if pts[len(pts)-1].Kind == series.Float32 {
				pts[len(pts)-1] = series.Float32Point(tm, math.Float32frombits(uint32(pts[len(pts)-1].Bits)))
			}
			b = b[11:]
		}
		roundTrip(t, 0, pts)
	})
}

// TestBitWriterSlack pins what the reader's unchecked loads rely on: a
// bitWriter always has slack bytes of capacity to spare, so reading its
// bytes copies nothing, while bytes without them are read from a copy.
func TestBitWriterSlack(t *testing.T) {
	var w bitWriter
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		if i%500 == 499 {
			w.reset()
		}
		w.writeBits(rng.Uint64(), uint8(rng.IntN(65)))
		w.writeBit(rng.IntN(2) == 1)
		if cap(w.b)-len(w.b) < slack {
			t.Fatalf("write %d: %d bytes of capacity to spare, want %d", i, cap(w.b)-len(w.b), slack)
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = newBitReader(w.b) }); n != 0 && !invariants.RaceEnabled {
		t.Fatalf("reading a bitWriter's bytes allocated %v times", n)
	}
	tight := []byte{0xa5, 0x5a, 0xff}
	r := newBitReader(tight[:3:3])
	if got := r.take(24); got != 0xa55aff || r.overrun() {
		t.Fatalf("unpadded bytes read %#x (overrun %v)", got, r.overrun())
	}
	if r.take(1); !r.overrun() {
		t.Fatal("a read past the end is not an overrun")
	}
}
