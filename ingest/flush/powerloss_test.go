package flush

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
)

// history is what was committed: the latest value per series and time.
type history struct{ latest ingesttest.Model }

func newHistory() *history { return &history{latest: ingesttest.Model{}} }

func (h *history) add(key []byte, p series.Point) { h.latest.Add(key, p) }

// readAll reads every point of key through the store and then the head,
// the head's winning a shared timestamp (it holds the log's latest write).
func readAll(t testing.TB, s *ingesttest.Store, h *head.Head, key []byte, hours int) map[int64]series.Point {
	got := map[int64]series.Point{}
	for base := int64(t0); base < t0+int64(hours)*head.RowSpan; base += head.RowSpan {
		pts, _ := s.Points(t, key, base)
		for _, p := range pts {
			got[p.T] = p
		}
	}
	for _, p := range h.AppendPoints(nil, key, 0, 1<<62) {
		got[p.T] = p
	}
	return got
}

// checkDurable checks that every point of m (all committed with sync) is
// read back with its latest value and that nothing else is read.
func checkDurable(t testing.TB, m ingesttest.Model, s *ingesttest.Store, h *head.Head, what string) {
	t.Helper()
	for key, want := range m {
		got := readAll(t, s, h, []byte(key), 6)
		for tm, p := range want {
			if got[tm] != p {
				t.Fatalf("%s: series %x point at %d: %+v, want %+v", what, key, tm-t0, got[tm], p)
			}
		}
		if len(got) != len(want) {
			for tm, p := range got {
				if _, ok := want[tm]; !ok {
					t.Fatalf("%s: series %x has %+v, never written", what, key, p)
				}
			}
		}
	}
}

// TestPowerLossDuringFlushAndCompaction takes crash clones of the one file
// system holding log and store at random steps of flushes and compactions
// (before a write reaches the store, right after a read) and checks that
// each clone, reopened, still holds every point committed with sync.
func TestPowerLossDuringFlushAndCompaction(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	clones := 0
	for iter := range 3 {
		format := []schema.Format{schema.FormatDense, schema.FormatOpenTSDB}[iter%2]
		fs := vfs.NewCrashableMem()
		s := openStore(t, fs)
		p := newPipeline(t, fs, s, format, 7, "wal")
		meta := &ingesttest.HookTable{Table: s.Meta}
		p.f.opts.Meta = meta
		p.f.mu.queue.meta = meta
		hist := newHistory()
		var taken []vfs.FS
		var expected []ingesttest.Model // what was committed when each clone was taken
		hook := func(string, []byte) {
			if rng.IntN(3) == 0 {
				taken = append(taken, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(2) * 50, RNG: rng}))
				expected = append(expected, hist.latest.Clone())
			}
		}
		p.data.SetHook(hook)
		meta.SetHook(hook)
		keys := ingesttest.Keys(6)
		commit := func(n int, hour int64) {
			a := p.h.Appender()
			for range n {
				key := keys[rng.IntN(len(keys))]
				pt := ingesttest.RandomPoint(rng, t0+hour*head.RowSpan+int64(rng.IntN(360))*10_000)
				a.AppendKey(key, pt)
				hist.add(key, pt)
			}
			if err := a.Commit(true); err != nil {
				t.Fatal(err)
			}
		}
		p.clock = t0 + 3*head.RowSpan
		for h := range int64(3) {
			commit(300, h)
		}
		p.clock += 2 * time.Minute.Milliseconds()
		p.flush(false)
		commit(50, 0) // late points, some overwriting
		commit(50, 1)
		p.clock += 2 * time.Minute.Milliseconds()
		p.flush(false)
		commit(100, 3) // an open hour, flushed early at "shutdown"
		p.flush(true)
		p.compact(false)
		p.clock = t0 + 5*head.RowSpan
		p.compact(false)
		p.compact(true)
		p.data.SetHook(nil)
		meta.SetHook(nil)
		hist.latest.CheckStore(t, s, 1)
		p.h.Close()
		s.DB.Close()
		for i, c := range taken {
			s2 := openStore(t, c)
			h2 := openHead(t, c, headOpts())
			checkDurable(t, expected[i], s2, h2, fmt.Sprintf("%s clone %d", format, i))
			if st := h2.ReplayStats(); st.BadRecords > 0 || st.OrphanSamples > 0 && st.WAL.CorruptRecords == 0 {
				t.Fatalf("clone %d: replay %+v", i, st)
			}
			h2.Close()
			s2.DB.Close()
		}
		clones += len(taken)
	}
	if clones < 10 {
		t.Fatalf("only %d crash clones taken", clones)
	}
	t.Logf("%d crash clones checked", clones)
}
