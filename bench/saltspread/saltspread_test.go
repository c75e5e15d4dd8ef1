package saltspread

import (
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/storage/pebble"
)

// resolve assigns the UIDs of n devops series on the real engine over an
// in-memory filesystem (the subject is the spread, not durability, and it
// spares one fsync per assignment).
func resolve(t *testing.T, n int) *TSUIDs {
	t.Helper()
	db, err := pebble.Open("/salt", &pebble.Options{FS: vfs.NewMem(), Logger: quiet, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts, err := Resolve(context.Background(), db, Config{Series: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Keys) != n {
		t.Fatalf("resolved %d series, want %d", len(ts.Keys), n)
	}
	return ts
}

// TestDefaultSaltSpread is issue 3 item 5: with the default 20 buckets, the
// 50,000 devops series spread with max/mean at most 1.1.
func TestDefaultSaltSpread(t *testing.T) {
	ts := resolve(t, DefaultSeries)
	if ts.Hosts != 5000 || ts.Metrics != 10 {
		t.Fatalf("dataset %d hosts x %d metrics, want 5000 x 10", ts.Hosts, ts.Metrics)
	}
	r, err := Spread(ts, salt.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Counts) != 20 || r.Sum() != DefaultSeries {
		t.Fatalf("%d buckets summing to %d, want 20 summing to %d", len(r.Counts), r.Sum(), DefaultSeries)
	}
	if got := r.Ratio(); got > 1.1 || got < 1 {
		t.Fatalf("max/mean %.4f, want 1..1.1 (counts %v)", got, r.Counts)
	}
	if _, mn := r.Min(); mn == 0 {
		t.Fatalf("an empty bucket: %v", r.Counts)
	}
	t.Logf("counts %v max/mean %.4f", r.Counts, r.Ratio())

	none, err := Spread(ts, salt.None())
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Counts) != 1 || none.Counts[0] != DefaultSeries || none.Ratio() != 1 {
		t.Fatalf("width 0: counts %v ratio %v, want [%d] 1", none.Counts, none.Ratio(), DefaultSeries)
	}
}

// TestSpreadWidths checks that wider salts (bytes 5..8 repeat the bucket)
// and other bucket counts read back the same buckets salt.Bucket computes,
// on a partial last host. Bucket counts that do not fit the width are left
// out: the salt bytes keep only the bucket's low bytes there, as in OpenTSDB.
func TestSpreadWidths(t *testing.T) {
	ts := resolve(t, 1234)
	if ts.Hosts != 124 || len(ts.Keys) != 1234 {
		t.Fatalf("%d hosts, %d keys; want 124, 1234", ts.Hosts, len(ts.Keys))
	}
	for _, w := range []int{1, 2, 4, 5, 8} {
		for _, b := range []int{1, 7, 256, 1000} {
			if w < 4 && b > 1<<(8*w) {
				continue
			}
			s, err := salt.New(w, b)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Spread(ts, s)
			if err != nil {
				t.Fatalf("width %d buckets %d: %v", w, b, err)
			}
			if len(r.Counts) != b || r.Sum() != 1234 {
				t.Fatalf("width %d buckets %d: %d buckets summing to %d", w, b, len(r.Counts), r.Sum())
			}
		}
	}
}

func TestConfigInvalid(t *testing.T) {
	if _, err := Resolve(context.Background(), nil, Config{Series: -1}); err == nil {
		t.Fatal("series -1 accepted")
	}
}

func TestSpreadBucketsTooWide(t *testing.T) {
	ts := resolve(t, 10)
	s, err := salt.New(1, 257)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Spread(ts, s); !errors.Is(err, ErrInvalid) {
		t.Fatalf("width 1 with 257 buckets: err %v, want ErrInvalid", err)
	}
}
