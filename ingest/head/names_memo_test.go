package head

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// nameLookups counts the lookups of uid's shared name caches.
func nameLookups(u *uid.UIDs) (n uint64) {
	for _, st := range u.Stats() {
		n += st.Names.Hits + st.Names.Misses
	}
	return n
}

// TestNameMemoSparesSharedCache: points of series the appender does not
// remember (it keeps one) resolve names it resolved before from its memo,
// without a lookup in uid's shared cache; a rename, after DropCache (what
// a session does when the UIDs change), is resolved afresh: the old name
// gets a new UID, not the renamed one's.
func TestNameMemoSparesSharedCache(t *testing.T) {
	ctx := context.Background()
	n, _, u := newNameAppender(t, 1)
	add := func(host string, ts int64) {
		t.Helper()
		tags := []uid.Tag{{Key: []byte("host"), Value: []byte(host)}, {Key: []byte("dc"), Value: []byte("east")}}
		if _, err := n.Append(ctx, []byte("m"), tags, series.IntPoint(t0+ts, ts)); err != nil {
			t.Fatal(err)
		}
		if err := n.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 0)
	add("b", 1) // every name has a UID now: m, host, dc, east, a, b
	add("a", 2) // a and b, assigned at a Commit, found once
	add("b", 3)
	before := nameLookups(u)
	for i := range 10 {
		add([]string{"a", "b"}[i%2], int64(4+i)) // series alternate: never remembered
	}
	if got := nameLookups(u) - before; got != 0 {
		t.Fatalf("%d lookups in uid's shared cache for names the appender resolved before", got)
	}

	old, err := u.Resolve(ctx, uid.TagV, []byte("east"))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Rename(ctx, uid.TagV, "east", "west"); err != nil {
		t.Fatal(err)
	}
	n.DropCache()
	add("a", 20) // "east" is a new name now
	id, found, err := u.Find(ctx, uid.TagV, []byte("east"))
	if err != nil || !found || id == old {
		t.Fatalf("after the rename and DropCache, east = %d (found %v, %v); the renamed UID was %d", id, found, err, old)
	}
}
