package head

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

func TestNameAppender(t *testing.T) {
	ctx := context.Background()
	n, h, u := newNameAppender(t, 2)
	tags := func(kv ...string) []uid.Tag {
		var out []uid.Tag
		for i := 0; i < len(kv); i += 2 {
			out = append(out, uid.Tag{Key: []byte(kv[i]), Value: []byte(kv[i+1])})
		}
		return out
	}
	add := func(metric string, tg []uid.Tag, tm int64) SeriesRef {
		t.Helper()
		ref, err := n.Append(ctx, []byte(metric), tg, series.IntPoint(t0+tm, tm))
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	// New names defer their points (ref 0) until Commit assigns them.
	if ref := add("m", tags("b", "2", "a", "1"), -1); ref != 0 {
		t.Fatalf("a point with new names got ref %d at once", ref)
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	// Tag keys in name order get UIDs in that order; "b" then "a" in the
	// input, so the key needs sorting by UID.
	a1 := add("m", tags("a", "1", "b", "2"), 0)
	a2 := add("m", tags("b", "2", "a", "1"), 1) // other input order: same series
	if _, err := u.Assign(ctx, uid.TagV, []byte("9")); err != nil {
		t.Fatal(err)
	}
	b1 := add("m", tags("a", "9"), 2)
	if a1 != a2 || a1 == b1 || a1 == 0 || b1 == 0 {
		t.Fatalf("refs %d %d %d", a1, a2, b1)
	}
	if _, err := u.Assign(ctx, uid.Metric, []byte("other")); err != nil {
		t.Fatal(err)
	}
	add("other", nil, 3) // the cache of two was emptied on the way
	if len(n.refs) > 2 {
		t.Fatalf("cache of size 2 holds %d series", len(n.refs))
	}
	if again := add("m", tags("a", "1", "b", "2"), 4); again != a1 {
		t.Fatalf("after eviction the series has ref %d, was %d", again, a1)
	}
	n.DropCache()
	if len(n.refs) != 0 {
		t.Fatal("DropCache kept entries")
	}
	if _, err := n.Append(ctx, []byte("m"), tags("a", "1", "a", "2"), series.IntPoint(t0, 1)); !errors.Is(err, uid.ErrDuplicateTag) {
		t.Fatalf("duplicate tag key: %v", err)
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	if h.NumSeries() != 3 || len(h.AppendPoints(nil, keyBytes(h.refs.get(a1).key), 0, 1<<62)) != 4 {
		t.Fatalf("head: %d series", h.NumSeries())
	}
}

// newNameAppender opens a store on a memory filesystem, its UID table and
// a head, all closed when t ends, and returns a NameAppender of the head
// remembering cacheSize series (0: the default), the head and the UIDs.
func newNameAppender(t *testing.T, cacheSize int) (*NameAppender, *Head, *uid.UIDs) {
	t.Helper()
	fs := vfs.NewMem()
	s := openStore(t, fs)
	t.Cleanup(func() { _ = s.DB.Close() })
	u, err := uid.Open(context.Background(), s.DB, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := mustOpenHead(t, fs, testOpts(nil))
	t.Cleanup(func() { _ = h.Close() })
	return h.NameAppender(u, cacheSize), h, u
}
