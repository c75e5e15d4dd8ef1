package index

import (
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
)

// TestWritePathAllocs asserts that the calls the write path makes for
// every point or row of a known series do not allocate.
func TestWritePathAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := openMemStore(t)
	ix := s.open(t, nil)
	k := s.tsuid(t, "m", "host=a", "dc=b")
	mustRegister(t, ix, k, 0, 10*hourMs)
	for name, fn := range map[string]func(){
		"RegisterSeries": func() {
			if err := ix.RegisterSeries(k); err != nil {
				t.Fatal(err)
			}
		},
		"Touch":  func() { ix.Touch(k, 5*hourMs) },
		"Lookup": func() { ix.Lookup(k) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}
