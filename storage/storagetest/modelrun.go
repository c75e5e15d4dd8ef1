package storagetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) modelCases() []testCase {
	return []testCase{{"Random", s.testModelRandom}}
}

// The model test draws from small alphabets so operations collide: rows
// that prefix each other around 0x00 and 0xFF, qualifiers likewise, and five
// timestamps so equal-timestamp overwrites are common.
var (
	modelRows = [][]byte{{0x00}, {0x00, 0x00}, {0x00, 0xff}, {0x61}, {0x61, 0x00}, {0x61, 0x62}, {0xff}, {0xff, 0xff}}
	// modelBounds adds keys that are not rows; nil means an open bound.
	modelBounds   = append(slices.Clone(modelRows), []byte{0x01}, []byte{0x61, 0x00, 0x00}, []byte{0x62}, nil)
	modelQuals    = [][]byte{{}, {0x00}, []byte("q"), []byte("q\x00"), []byte("q\xff"), []byte("r")}
	modelValues   = [][]byte{{}, []byte("v"), {0x00}, {0xff, 0xfe}, []byte("a-longer-value")}
	modelPieces   = [][]byte{{}, []byte("x"), []byte("yz"), {0x00}}
	modelRegexes  = []string{".*", "a.*", `\x00+`, `\xff.*`, "a", ".", "..", `[\x00-\x61]`, `a|a\x00`, `(?s).\x00`, "a?b", "zz"}
	modelFamilies = []string{famA, famB, famC, famTTL}
	// modelBatchBounds cut rows into batches: every cell alone, or the
	// bound falls among the sizes of two or three model cells.
	modelBatchBounds = []int{1, storage.CellOverhead, 200, 210, 250, 320}
)

// modelRun drives one random sequence against an engine table and the model.
//
// Family roles keep the model deterministic: a and b take explicit
// timestamps 1..5 ms; ttl takes timestamps hours old (expired) or minutes
// old (live); c, which keeps one version, takes only clock-stamped writes,
// increments and appends, so its exact timestamps never matter and are
// checked only to lie within the run. Time-ranged deletes never touch b,
// because whether a version b's limit hid comes back when a newer one is
// deleted depends on when the engine collected garbage.
type modelRun struct {
	t     *testing.T
	rng   *rand.Rand
	seed  int64
	steps int
	tbl   storage.Table
	m     *model
	now   func() time.Time
	log   []string
	step  int
	start int64          // engine clock when the run began
	split int64          // separates explicit timestamps (below) from clock ones
	ttlTS []int64        // two expired, three live
	dst   []storage.Cell // GetAppend's reused cells
	buf   []byte         // and bytes
}

func (s *suite) testModelRandom(t *testing.T) {
	_, tbl := s.table(t, stdSpec("model"))
	r := &modelRun{
		t: t, seed: s.opts.ModelSeed, steps: s.opts.ModelSteps, tbl: tbl, now: s.opts.Now,
		rng: rand.New(rand.NewPCG(uint64(s.opts.ModelSeed), 0x5eed)),
		m:   newModel(stdSpec("model"), s.opts.Now),
	}
	r.start = s.nowMicros()
	r.split = r.start - (30 * time.Minute).Microseconds()
	old, live := r.start-(3*time.Hour).Microseconds(), r.start-(10*time.Minute).Microseconds()
	r.ttlTS = []int64{old, old + 1000, live, live + 1000, live + 2000}
	t.Logf("model test: seed %d, %d steps (replay with Options{ModelSeed: %d, ModelSteps: %d})",
		r.seed, r.steps, r.seed, r.steps)
	for r.step = 1; r.step <= r.steps; r.step++ {
		r.randomOp()
	}
	r.checkAll()
}

// randomOp runs one weighted random operation; writes end with a full check.
func (r *modelRun) randomOp() {
	ops := []struct {
		weight int
		fn     func()
		write  bool
	}{
		{25, r.opPut, true}, {8, r.opDelete, true}, {2, r.opDeleteRange, true},
		{8, r.opApply, true}, {8, r.opIncrement, true}, {8, r.opCheckAndPut, true},
		{6, r.opAppend, true}, {2, r.opBadPut, true}, {15, r.opGet, false}, {20, r.opScan, false},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.rng.IntN(total)
	for _, o := range ops {
		if n -= o.weight; n < 0 {
			o.fn()
			if o.write {
				r.checkAll()
			}
			return
		}
	}
}

func (r *modelRun) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf("%5d: ", r.step)+fmt.Sprintf(format, args...))
}

// fail reports a divergence with the seed and the operations leading to it.
func (r *modelRun) fail(format string, args ...any) {
	r.t.Helper()
	tail := r.log[max(0, len(r.log)-80):]
	r.t.Fatalf("model mismatch at step %d (seed %d): %s\nlast %d of %d operations:\n%s\nreplay with Options{ModelSeed: %d, ModelSteps: %d}",
		r.step, r.seed, fmt.Sprintf(format, args...), len(tail), len(r.log), strings.Join(tail, "\n"), r.seed, r.step)
}

func (r *modelRun) pick(n int) int  { return r.rng.IntN(n) }
func (r *modelRun) coin(n int) bool { return r.rng.IntN(n) == 0 }
func (r *modelRun) row() []byte     { return modelRows[r.pick(len(modelRows))] }
func (r *modelRun) qual() []byte    { return modelQuals[r.pick(len(modelQuals))] }
func (r *modelRun) family() string  { return modelFamilies[r.pick(len(modelFamilies))] }
func (r *modelRun) smallTS() int64  { return ms(int64(1 + r.pick(5))) }
func (r *modelRun) bound() []byte   { return modelBounds[r.pick(len(modelBounds))] }
func (r *modelRun) valueOf() []byte { return modelValues[r.pick(len(modelValues))] }
func (r *modelRun) ttlStamp() int64 { return r.ttlTS[r.pick(len(r.ttlTS))] }
func (r *modelRun) regex() string   { return modelRegexes[r.pick(len(modelRegexes))] }
func (r *modelRun) piece() []byte   { return modelPieces[r.pick(len(modelPieces))] }
func (r *modelRun) counter() []byte { return be64(int64(r.pick(8) - 2)) }
func (r *modelRun) maybe(b []byte) []byte {
	if r.coin(2) {
		return nil
	}
	return b
}

func (r *modelRun) genCell() storage.Cell {
	c := storage.Cell{Family: r.family(), Qualifier: r.qual(), Value: r.valueOf()}
	switch c.Family {
	case famA, famB:
		c.Timestamp = r.smallTS()
	case famTTL:
		c.Timestamp = r.ttlStamp()
	case famC:
		if r.coin(2) {
			c.Value = r.counter()
		}
	}
	return c
}

// genCells returns up to n cells, at most one per version, so no Put
// relies on the order of its own cells.
func (r *modelRun) genCells(n int) []storage.Cell {
	var out []storage.Cell
	seen := make(map[string]bool)
	for range n {
		c := r.genCell()
		k := fmt.Sprintf("%s/%q/%d", c.Family, c.Qualifier, c.Timestamp)
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}

func (r *modelRun) genDeletion() storage.Deletion {
	fam := r.family()
	var d storage.Deletion
	switch r.pick(5) {
	case 0:
		return storage.Deletion{Kind: storage.DeleteRow}
	case 1, 2:
		d = storage.Deletion{Kind: storage.DeleteFamily, Family: fam}
	default:
		d = storage.Deletion{Kind: storage.DeleteColumn, Family: fam, Qualifier: r.qual()}
	}
	if r.coin(2) {
		d.MinTime, d.MaxTime = r.deleteRange(fam)
	}
	return d
}

// deleteRange picks a time range the family's role allows (see modelRun).
func (r *modelRun) deleteRange(fam string) (int64, int64) {
	switch fam {
	case famB:
		return 0, 0
	case famC:
		return ms(1), []int64{0, ms(3)}[r.pick(2)]
	case famTTL:
		ts := r.ttlStamp()
		p := [][2]int64{{ts, ts + 1000}, {ts, 0}, {0, ts}}[r.pick(3)]
		return p[0], p[1]
	}
	lo := r.smallTS()
	return lo, []int64{lo + 1000, 0, lo + ms(int64(1+r.pick(3)))}[r.pick(3)]
}

func (r *modelRun) genRead() *storage.ReadOptions {
	if r.coin(4) {
		return nil
	}
	o := &storage.ReadOptions{}
	if r.coin(3) {
		fams := slices.Clone(modelFamilies)
		r.rng.Shuffle(len(fams), func(i, j int) { fams[i], fams[j] = fams[j], fams[i] })
		o.Families = fams[:1+r.pick(len(fams))]
	}
	if r.coin(4) {
		for range 1 + r.pick(3) {
			o.Qualifiers = append(o.Qualifiers, r.qual())
		}
	}
	if r.coin(5) {
		o.QualifierPrefix = [][]byte{{}, []byte("q"), {0x00}}[r.pick(3)]
	}
	if r.coin(5) {
		o.QualifierStart, o.QualifierStop = r.maybe(r.qual()), r.maybe(r.qual())
	}
	ranges := [][2]int64{{0, 0}, {0, 0}, {ms(2), ms(4)}, {ms(3), 0}, {0, ms(3)}, {r.split, 0}, {0, r.split},
		{r.ttlTS[2], r.ttlTS[2] + 2000}, {ms(1), ms(1) + 1000}}
	tr := ranges[r.pick(len(ranges))]
	o.MinTime, o.MaxTime = tr[0], tr[1]
	if r.coin(4) {
		o.MaxVersions = 1 + r.pick(2)
	}
	return o
}

func (r *modelRun) genScan() *storage.ScanOptions {
	o := &storage.ScanOptions{Start: r.bound(), Stop: r.bound(), Reverse: r.coin(2)}
	if o.Start != nil && o.Stop != nil && bytes.Compare(o.Start, o.Stop) > 0 {
		o.Start, o.Stop = o.Stop, o.Start
	}
	if r.coin(4) {
		o.RowRegex = r.regex()
	}
	if r.coin(3) {
		o.Limit = 1 + r.pick(3)
	}
	if r.coin(3) {
		// Model cells count 96 to 112 bytes: one, two or three a batch.
		o.MaxBatchBytes = modelBatchBounds[r.pick(len(modelBatchBounds))]
	}
	if ro := r.genRead(); ro != nil {
		o.ReadOptions = *ro
	}
	return o
}
