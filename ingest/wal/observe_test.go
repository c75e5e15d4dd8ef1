package wal

import (
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestObserveSync: every segment sync a synchronous Append runs, on a
// real disk, is given to Options.ObserveSync with its duration; an
// unsynced append gives none.
func TestObserveSync(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Duration
	observed := func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), seen...)
	}
	opts := quietOpts(64 << 10)
	opts.ObserveSync = func(d time.Duration) {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
	}
	l, err := Open(vfs.Default, t.TempDir(), opts, func(uint32, RecordType, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	opened := len(observed()) // a new segment's header may be synced
	if err := appendPayload(l, "unsynced", false); err != nil {
		t.Fatal(err)
	}
	if n := len(observed()) - opened; n != 0 {
		t.Errorf("an unsynced append observed %d syncs", n)
	}
	for i := range 3 {
		if err := appendPayload(l, "synced", true); err != nil {
			t.Fatal(err)
		}
		got := observed()[opened:]
		if len(got) != i+1 {
			t.Fatalf("after %d synced appends %d syncs observed", i+1, len(got))
		}
		if d := got[i]; d <= 0 || d > time.Minute {
			t.Errorf("sync %d observed as %v", i, d)
		}
	}
}
