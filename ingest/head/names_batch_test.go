package head

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest/internal/ingesttest"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

func hostTags(host string) []uid.Tag {
	return []uid.Tag{{Key: []byte("host"), Value: []byte(host)}, {Key: []byte("dc"), Value: []byte("lon")}}
}

// TestNameAppenderNewNames: 5,000 new tag values (more than DeferredNames,
// so batches are assigned before Commit too) through one NameAppender:
// every point is accepted at once, bad points are refused at once, and
// after Commit each host has one UID and its points are in the head in
// the order given (a later point with the same timestamp wins).
func TestNameAppenderNewNames(t *testing.T) {
	ctx := context.Background()
	n, h, u := newNameAppender(t, 0)
	const hosts = 5000
	add := func(host string, tm, v int64) (SeriesRef, error) {
		return n.Append(ctx, []byte("sys.cpu"), hostTags(host), series.IntPoint(t0+tm, v))
	}
	if _, err := add("known", 0, 1); err != nil { // known before the burst
		t.Fatal(err)
	}
	deferred := 0
	for round := int64(0); round < 2; round++ {
		for i := 0; i < hosts; i++ {
			ref, err := add(fmt.Sprintf("h%05d", i), 0, round*hosts+int64(i))
			if err != nil {
				t.Fatalf("round %d host %d: %v", round, i, err)
			}
			if ref == 0 {
				deferred++
			}
			if i%100 == 0 {
				if _, err := add("known", round*hosts+int64(i)+1, 2); err != nil {
					t.Fatal(err)
				}
				var ne *uid.NameError
				if _, err := add("bad\x01", 0, 0); !errors.As(err, &ne) {
					t.Fatalf("bad name mid-burst: %v", err)
				}
				if _, err := n.Append(ctx, []byte("sys.cpu"), hostTags("x"), series.IntPoint(-1, 0)); !errors.Is(err, ErrOutOfBounds) {
					t.Fatalf("bad timestamp mid-burst: %v", err)
				}
			}
		}
	}
	if deferred == 0 || n.Len() == 0 {
		t.Fatalf("%d points deferred, %d pending", deferred, n.Len())
	}
	if err := n.Commit(false); err != nil {
		t.Fatal(err)
	}
	if n.Len() != 0 {
		t.Fatalf("%d points pending after Commit", n.Len())
	}
	if got := h.NumSeries(); got != hosts+1 {
		t.Fatalf("%d series in the head, want %d", got, hosts+1)
	}
	seen := map[uid.ID]bool{}
	for i := 0; i < hosts; i++ {
		host := fmt.Sprintf("h%05d", i)
		id, err := u.Lookup(ctx, uid.TagV, []byte(host))
		if err != nil || seen[id] {
			t.Fatalf("%s: uid %d, %v (seen: %v)", host, id, err, seen[id])
		}
		seen[id] = true
		tags := hostTags(host)
		key, err := u.ResolvePoint(ctx, nil, []byte("sys.cpu"), tags)
		if err != nil {
			t.Fatal(err)
		}
		SortSeriesKey(key, h.opts.Widths)
		pts := h.AppendPoints(nil, key, 0, 1<<62)
		if len(pts) != 1 || pts[0].Int() != hosts+int64(i) {
			t.Fatalf("%s: points %v, want the second round's value %d", host, pts, hosts+i)
		}
	}
	if st := u.Stats()[uid.TagV]; st.Assigned != hosts+2 {
		t.Errorf("%d tag values assigned, want %d", st.Assigned, hosts+2)
	}
}

// TestNameAppenderDeferredFailure: when the UID table fails while new
// names are deferred, the batch fails whole: Append reports the store's
// retryable error once a deferral fills, later Appends and Commit report it
// too, nothing of the batch reaches the head, and the appender works again
// after.
func TestNameAppenderDeferredFailure(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	defer s.DB.Close()
	ctx := context.Background()
	base, err := uid.Open(ctx, s.DB, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ht := &ingesttest.HookTable{Table: base.Table()}
	u, err := uid.New(ht, &uid.Options{Logger: slog.New(slog.DiscardHandler), RetryBackoff: 1, NoAutoCreateMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Assign(ctx, uid.Metric, []byte("m")); err != nil {
		t.Fatal(err)
	}
	h := mustOpenHead(t, fs, testOpts(nil))
	defer h.Close()
	n := h.NameAppender(u, 0)
	// With metrics not auto-created an unknown metric is refused at once.
	if _, err := n.Append(ctx, []byte("unknown"), nil, series.IntPoint(t0, 1)); !errors.Is(err, uid.ErrNoSuchName) {
		t.Fatalf("unknown metric: %v", err)
	}
	ht.SetFail(true)
	add := func(i int) error {
		_, err := n.Append(ctx, []byte("m"), []uid.Tag{{Key: []byte("host"), Value: fmt.Appendf(nil, "h%d", i)}}, series.IntPoint(t0, 1))
		return err
	}
	// Commit fails and acknowledges nothing.
	for i := 0; i < 10; i++ {
		if err := add(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Commit(false); !storage.IsRetryable(err) {
		t.Fatalf("commit with the store down: %v, want retryable", err)
	}
	if h.NumSeries() != 0 || n.Len() != 0 {
		t.Fatalf("after a failed commit: %d series, %d pending", h.NumSeries(), n.Len())
	}
	// A deferral that fills fails in Append, and the batch stays failed.
	var failedAt int
	for i := 0; i < DeferredNames; i++ {
		if err := add(i); err != nil {
			if !storage.IsRetryable(err) {
				t.Fatalf("append %d: %v, want retryable", i, err)
			}
			failedAt = i
			break
		}
	}
	if failedAt != DeferredNames-2 { // host and DeferredNames-1 values
		t.Fatalf("the deferral failed at append %d, want %d", failedAt, DeferredNames-2)
	}
	if err := add(-1); !storage.IsRetryable(err) {
		t.Fatalf("append after the failure: %v", err)
	}
	if err := n.Commit(false); !storage.IsRetryable(err) {
		t.Fatalf("commit after the failure: %v", err)
	}
	if h.NumSeries() != 0 {
		t.Fatalf("%d series in the head", h.NumSeries())
	}
	ht.SetFail(false)
	for i := 0; i < 10; i++ {
		if err := add(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Commit(false); err != nil || h.NumSeries() != 10 {
		t.Fatalf("store back: %v, %d series", err, h.NumSeries())
	}
}
