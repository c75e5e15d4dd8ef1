package head

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// TestAppendKnown: a series appended with a decoder's Key is found by
// that Key alone, a deferred one once a later point is appended, and
// nothing is found after DropCache or under another Key.
func TestAppendKnown(t *testing.T) {
	ctx := context.Background()
	n, h, _ := newNameAppender(t, 4)
	key, tags := []byte("raw labels of m{a=1}"), []uid.Tag{{Key: []byte("a"), Value: []byte("1")}}
	known := func(tm int64) (SeriesRef, bool) {
		t.Helper()
		ref, ok, err := n.AppendKnown(key, series.IntPoint(t0+tm, tm))
		if err != nil {
			t.Fatal(err)
		}
		return ref, ok
	}
	if _, ok := known(0); ok {
		t.Fatal("an unknown Key was found")
	}
	// New names: deferred, so not remembered by Key yet.
	if ref, err := n.AppendKeyed(ctx, key, []byte("m"), tags, series.IntPoint(t0+1, 1)); err != nil || ref != 0 {
		t.Fatalf("new names: ref %d, %v", ref, err)
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	if _, ok := known(2); ok {
		t.Fatal("a deferred series was remembered by Key")
	}
	ref, err := n.AppendKeyed(ctx, key, []byte("m"), tags, series.IntPoint(t0+3, 3))
	if err != nil || ref == 0 {
		t.Fatalf("known names: ref %d, %v", ref, err)
	}
	if got, ok := known(4); !ok || got != ref {
		t.Fatalf("by Key: ref %d, %v; by names %d", got, ok, ref)
	}
	if _, ok, _ := n.AppendKnown([]byte("other raw labels"), series.IntPoint(t0+5, 5)); ok {
		t.Fatal("another Key was found")
	}
	n.DropCache()
	if _, ok := known(6); ok || len(n.keys) != 0 {
		t.Fatal("DropCache kept the Keys")
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	if got := len(h.AppendPoints(nil, keyBytes(h.refs.get(ref).key), 0, 1<<62)); got != 3 {
		t.Fatalf("series holds %d points, want 3 (1, 3, 4)", got)
	}
}

// TestKeyBytesBounded: the remembered Keys stay within maxKeyBytes
// whatever their sizes, and a Key over maxKeyBytes/64 is not remembered.
func TestKeyBytesBounded(t *testing.T) {
	ctx := context.Background()
	n, _, _ := newNameAppender(t, 0)
	tags := []uid.Tag{{Key: []byte("a"), Value: []byte("1")}}
	if _, err := n.Append(ctx, []byte("m"), tags, series.IntPoint(t0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, maxKeyBytes/64)
	for i := range 300 {
		key[0], key[1] = byte(i), byte(i>>8)
		if _, err := n.AppendKeyed(ctx, key, []byte("m"), tags, series.IntPoint(t0+int64(i)+1, 1)); err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, e := range n.ents {
			held += len(e.dkey)
		}
		if n.keyBytes > maxKeyBytes || n.keyBytes != len(n.keys)*len(key) || held > maxKeyBytes {
			t.Fatalf("after %d Keys: %d bytes in %d keys, %d held by entries", i+1, n.keyBytes, len(n.keys), held)
		}
	}
	big := make([]byte, maxKeyBytes/64+1)
	if _, err := n.AppendKeyed(ctx, big, []byte("m"), tags, series.IntPoint(t0+1000, 1)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := n.AppendKnown(big, series.IntPoint(t0+1001, 1)); ok {
		t.Fatal("an oversized Key was remembered")
	}
	// Its series is remembered by its names instead.
	other := []uid.Tag{{Key: []byte("a"), Value: []byte("2")}}
	if _, err := n.Append(ctx, []byte("m"), other, series.IntPoint(t0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	n.DropCache()
	if _, err := n.AppendKeyed(ctx, big, []byte("m"), other, series.IntPoint(t0+1, 1)); err != nil {
		t.Fatal(err)
	}
	name := appendNameKey(nil, []byte("m"), other)
	if _, ok := n.refs[string(name)]; !ok {
		t.Fatal("a series with an oversized Key is remembered under neither")
	}
}

// TestAppendKnownOrder: AppendKnown finds each series by its Key whatever
// the order of the Keys, the order it saw last tried first (each entry
// pointing at the one that followed it), and keeps no Key once DropCache
// or a full set of Keys forgets them.
func TestAppendKnownOrder(t *testing.T) {
	ctx := context.Background()
	n, _, _ := newNameAppender(t, 0)
	const count = 5
	keys := make([][]byte, count)
	refs := make([]SeriesRef, count)
	for i := range keys {
		keys[i] = []byte{'k', byte('a' + i)}
		tags := []uid.Tag{{Key: []byte("a"), Value: []byte{byte('a' + i)}}}
		if _, err := n.Append(ctx, []byte("m"), tags, series.IntPoint(t0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := n.Commit(false); err != nil {
			t.Fatal(err)
		}
		ref, err := n.AppendKeyed(ctx, keys[i], []byte("m"), tags, series.IntPoint(t0+1, 1))
		if err != nil || ref == 0 {
			t.Fatalf("series %d: ref %d, %v", i, ref, err)
		}
		refs[i] = ref
	}
	tm := int64(2)
	run := func(order ...int) {
		t.Helper()
		for _, i := range order {
			ref, ok, err := n.AppendKnown(keys[i], series.IntPoint(t0+tm, tm))
			tm++
			if err != nil || !ok || ref != refs[i] {
				t.Fatalf("order %v, series %d: ref %d, %v, %v; want %d", order, i, ref, ok, err, refs[i])
			}
		}
		if err := n.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	run(0, 1, 2, 3, 4)
	run(0, 1, 2, 3, 4)
	for i := range count - 1 {
		if e := n.ents[n.keys[string(keys[i])]]; e.next != n.keys[string(keys[i+1])] {
			t.Fatalf("series %d points at entry %d, want the next series'", i, e.next)
		}
	}
	run(4, 3, 2, 1, 0)
	run(2, 2, 0, 4, 1, 3, 3)
	run(0, 1, 2, 3, 4)
	n.DropCache()
	if _, ok, _ := n.AppendKnown(keys[0], series.IntPoint(t0+tm, tm)); ok {
		t.Fatal("a Key was found after DropCache")
	}
	n.Rollback()
}
