package index

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tsd-db/tsd/uid"
)

// TestConcurrentUse registers, touches, queries, flushes and refreshes
// from many goroutines and two Indexes on one store (run it with -race),
// then checks that both agree on one id per series.
func TestConcurrentUse(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	a, b := s.open(t, nil), s.open(t, nil)
	const n = 120
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = s.tsuid(t, "m", fmt.Sprintf("host=h%d", i%40), fmt.Sprintf("dc=d%d", i/40))
	}
	host := s.assign(t, uid.TagK, "host")
	metric := s.assign(t, uid.Metric, "m")
	stop := make(chan struct{})
	var readers, writers sync.WaitGroup
	for w := range 6 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			ix := []*Index{a, b}[w%2]
			for i := range keys {
				k := keys[(i*7+w*13)%n]
				if err := ix.RegisterSeries(k); err != nil {
					t.Error(err)
					return
				}
				ix.Touch(k, int64(i+w)*hourMs)
			}
		}()
	}
	readers.Add(2)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			bm, err := a.Postings(ctx, metric, []Filter{{TagK: host, Type: Wildcard, Pattern: "h1*"}})
			if err != nil {
				t.Error(err)
				return
			}
			a.RestrictTime(bm, 0, 10*hourMs)
			a.ForEach(bm, func(Series) bool { return true })
			a.TagValues(host, bm)
			a.TagKeys(nil)
		}
	}()
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, ix := range []*Index{a, b} {
				if err := ix.Flush(ctx); err != nil {
					t.Error(err)
				}
				if err := ix.Refresh(ctx); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	writers.Wait()
	close(stop)
	readers.Wait()
	mustRefresh(t, a)
	mustRefresh(t, b)
	ids := map[SeriesID]bool{}
	for _, k := range keys {
		ia, oka := a.Lookup(k)
		ib, okb := b.Lookup(k)
		if !oka || !okb || ia != ib || ids[ia] {
			t.Fatalf("%x: ids %d/%v and %d/%v (or reused)", k, ia, oka, ib, okb)
		}
		ids[ia] = true
	}
	bm, err := b.Postings(ctx, metric, nil)
	if err != nil || bm.GetCardinality() != n || a.Len() != n || b.Len() != n {
		t.Fatalf("postings %v err %v, lengths %d %d: want %d", bm.GetCardinality(), err, a.Len(), b.Len(), n)
	}
}

// TestCloseStopsLoop: the refresh loop ends with Close.
func TestCloseStopsLoop(t *testing.T) {
	s := openMemStore(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ix, err := Open(context.Background(), s.meta, s.uids, &Options{RefreshInterval: 5 * time.Millisecond, HoleTimeout: time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, ix, s.tsuid(t, "m"), 0, 0)
	time.Sleep(20 * time.Millisecond)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.RegisterSeries(s.tsuid(t, "m2")); err == nil {
		t.Fatal("RegisterSeries of a new series after Close succeeded")
	}
}
