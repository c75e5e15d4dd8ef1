package changes

import (
	"math"
	"sync"
	"testing"
)

func TestMarkedHoursOnly(t *testing.T) {
	var tr Tracker
	g := tr.Gen()
	tr.Mark(10*hourMs+5, 10*hourMs+7)
	if !tr.Changed(g, 10*hourMs, 11*hourMs-1) {
		t.Fatal("a change inside the range is not seen")
	}
	if tr.Changed(g, 11*hourMs, 20*hourMs) {
		t.Fatal("a change before the range is reported")
	}
	if tr.Changed(g, 0, 10*hourMs-1) {
		t.Fatal("a change after the range is reported")
	}
	if tr.Changed(tr.Gen(), 0, 20*hourMs) {
		t.Fatal("a change before the generation is reported")
	}
}

func TestNegativeTimesAndWideSpans(t *testing.T) {
	var tr Tracker
	g := tr.Gen()
	tr.Mark(-1, -1) // the hour before 1970
	if !tr.Changed(g, -hourMs, -1) || tr.Changed(g, 0, hourMs) {
		t.Fatal("the hour before the epoch is not its own")
	}
	g = tr.Gen()
	tr.Mark(0, Slots*hourMs*3)
	if !tr.Changed(g, 5*Slots*hourMs, 5*Slots*hourMs) {
		t.Fatal("a change over more hours than slots is not seen everywhere")
	}
	g = tr.Gen()
	tr.Mark(7*hourMs, 7*hourMs)
	if !tr.Changed(g, math.MinInt64/2, math.MaxInt64/2) {
		t.Fatal("a read over every hour misses a change")
	}
}

func TestMarkAll(t *testing.T) {
	var tr Tracker
	g := tr.Gen()
	tr.MarkAll()
	if !tr.Changed(g, 0, 0) {
		t.Fatal("MarkAll is not seen")
	}
	if tr.Changed(tr.Gen(), 0, 0) {
		t.Fatal("MarkAll is seen by a later generation")
	}
}

// TestConcurrentMarksNeverLower: whatever order writers' marks land in,
// a slot ends at the latest generation, so a reader that took its Gen
// between two marks sees the second.
func TestConcurrentMarksNeverLower(t *testing.T) {
	var tr Tracker
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10000 {
				tr.Mark(hourMs, hourMs)
			}
		}()
	}
	wg.Wait()
	if got, want := tr.hours[slot(1)].Load(), tr.Gen(); got != want {
		t.Fatalf("slot holds generation %d after the last mark %d", got, want)
	}
}

// TestMovesAreNotChanges: a move is seen by ChangedOrMoved, in its hours
// only, and not by Changed; a change is seen by both.
func TestMovesAreNotChanges(t *testing.T) {
	var tr Tracker
	g := tr.Gen()
	tr.MarkMoved(3*hourMs, 3*hourMs+1)
	if tr.Changed(g, 0, 10*hourMs) {
		t.Fatal("a move is reported as a change")
	}
	if !tr.ChangedOrMoved(g, 3*hourMs, 3*hourMs) || tr.ChangedOrMoved(g, 4*hourMs, 10*hourMs) {
		t.Fatal("a move is not seen in its hour only")
	}
	tr.Mark(5*hourMs, 5*hourMs)
	if !tr.Changed(g, 5*hourMs, 5*hourMs) || !tr.ChangedOrMoved(g, 5*hourMs, 5*hourMs) {
		t.Fatal("a change is not seen by both")
	}
	g = tr.Gen()
	tr.MarkMoved(0, Slots*hourMs*2)
	if !tr.ChangedOrMoved(g, 7*Slots*hourMs, 7*Slots*hourMs) {
		t.Fatal("a move over more hours than slots is not seen everywhere")
	}
}
