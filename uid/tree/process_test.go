package tree

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestProcessorBounded checks that the queue is bounded (a series offered
// to a full queue is dropped and counted, Offer never blocks) and that
// queued series are filed in every enabled tree, off the caller's
// goroutine.
func TestProcessorBounded(t *testing.T) {
	s, _ := openPebbleStore(t)
	makeTestTree(t, s)
	started := make(chan string)
	release := make(chan struct{})
	load := func(ctx context.Context, tsuid []byte) (*Meta, error) {
		h := fmt.Sprintf("%X", tsuid)
		started <- h
		if h == "01" || h == "FF" {
			<-release // hold the goroutine
		}
		m := testMeta()
		m.TSUID = h
		m.Tags[1].V.Name = "user" + h
		return m, nil
	}
	p, err := NewProcessor(s, ProcessorOptions{Load: load, QueueSize: 2, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Offer([]byte{0x01})
	if got := <-started; got != "01" {
		t.Fatalf("first load %s", got)
	}
	// The goroutine is held in Load: two fit the queue, the third drops.
	p.Offer([]byte{0x02})
	p.Offer([]byte{0x03})
	p.Offer([]byte{0x04})
	if st := p.Stats(); st.Dropped != 1 || st.Queued != 2 {
		t.Fatalf("stats %+v, want 1 dropped and 2 queued", st)
	}
	release <- struct{}{}
	for _, want := range []string{"02", "03"} {
		if got := <-started; got != want {
			t.Fatalf("load %s, want %s", got, want)
		}
	}
	p.Offer([]byte{0xFF}) // a sentinel: once it loads, 02 and 03 are filed
	if got := <-started; got != "FF" {
		t.Fatalf("load %s, want FF", got)
	}
	if st := p.Stats(); st.Processed != 3 || st.Errors != 0 {
		t.Errorf("stats %+v, want 3 processed", st)
	}
	b, err := s.Branch(context.Background(), mustHex(t, "00010001A2460001CB54247F72020001BECD000181A800000030"))
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	for _, l := range b.Leaves {
		leaves = append(leaves, l.DisplayName)
	}
	if fmt.Sprint(leaves) != "[user01 user02 user03]" {
		t.Errorf("leaves %v", leaves)
	}
	close(release)
}

// TestProcessorLoadError counts a series whose Meta cannot be read.
func TestProcessAllLoadError(t *testing.T) {
	s, _ := openPebbleStore(t)
	tr := makeTestTree(t, s)
	bad := errors.New("no such UID")
	err := s.ProcessAll(context.Background(), []*Tree{tr}, []byte{1}, func(context.Context, []byte) (*Meta, error) { return nil, bad })
	if !errors.Is(err, bad) {
		t.Errorf("err %v", err)
	}
	if err := s.ProcessAll(context.Background(), nil, []byte{1}, nil); err != nil {
		t.Errorf("no trees: %v", err)
	}
}
