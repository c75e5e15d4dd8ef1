package index

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
)

func rawTSUIDs(from, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = rawTSUID(from + i)
	}
	return keys
}

// TestRegisterSeriesBatch: a batch creates its new series once each (a
// duplicate within the batch, or a series known already, is not claimed
// again), every one is loaded by an index opened afterwards, and a batch
// of known series allocates nothing.
func TestRegisterSeriesBatch(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	if err := ix.RegisterSeries(rawTSUID(1)); err != nil {
		t.Fatal(err)
	}
	keys := append(rawTSUIDs(1, 100), rawTSUID(7), rawTSUID(50))
	if err := ix.RegisterSeriesBatch(keys); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Series != 100 || st.Created != 100 || st.Adopted != 0 {
		t.Errorf("stats %+v, want 100 series created once each", st)
	}
	if other := s.open(t, nil); other.Len() != 100 {
		t.Errorf("an index opened afterwards loads %d series, want 100", other.Len())
	}
	if invariants.RaceEnabled {
		return
	}
	if n := testing.AllocsPerRun(20, func() { ix.RegisterSeriesBatch(keys) }); n != 0 {
		t.Errorf("a batch of known series allocates %v times, want 0", n)
	}
}

// TestRegisterSeriesBatchBadKey: a bad TSUID fails the batch before any
// of its series is written.
func TestRegisterSeriesBatchBadKey(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	keys := append(rawTSUIDs(1, 10), []byte{0, 0, 0, 0, 0, 1, 0, 0, 1})
	if err := ix.RegisterSeriesBatch(keys); !errors.Is(err, ErrBadTSUID) {
		t.Fatalf("batch with a zero metric UID: %v, want ErrBadTSUID", err)
	}
	if ix.Len() != 0 || s.open(t, nil).Len() != 0 {
		t.Errorf("after a refused batch: %d series known", ix.Len())
	}
}

// TestRegisterSeriesBatchConcurrent: batches and single registrations of
// overlapping series, in opposite orders, at once, neither deadlock (each
// batch leads some series another waits for) nor claim a series twice.
func TestRegisterSeriesBatchConcurrent(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	keys := rawTSUIDs(1, 300)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		order := slices.Clone(keys)
		if w%2 == 1 {
			slices.Reverse(order)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w == 3 {
				for _, k := range order {
					if err := ix.RegisterSeries(k); err != nil {
						errs <- err
						return
					}
				}
				return
			}
			for b := range slices.Chunk(order, 40+w*30) {
				if err := ix.RegisterSeriesBatch(b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := ix.Stats(); st.Series != 300 || st.Created != 300 || st.Adopted != 0 {
		t.Errorf("stats %+v, want 300 series created once each", st)
	}
}
