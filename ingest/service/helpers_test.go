package service

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// testStack is a real pebble store, UIDs and head in a temp directory.
type testStack struct {
	uids *uid.UIDs
	head *head.Head
	w    *Writer
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newStack(t testing.TB, headOpts *head.HeadOptions) *testStack {
	t.Helper()
	return newStackOn(t, vfs.Default, t.TempDir(), headOpts)
}

// newStackOn is newStack with the store and the log in dir on fs (a
// crashable vfs.MemFS for power-loss tests).
func newStackOn(t testing.TB, fs vfs.FS, dir string, headOpts *head.HeadOptions) *testStack {
	t.Helper()
	ctx := context.Background()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger(), FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.EnsureTable(ctx, uid.TableSpec(uid.DefaultTable)); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, uid.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	u, err := uid.New(tbl, &uid.Options{Logger: quietLogger(), NoAutoCreateTagVs: false})
	if err != nil {
		t.Fatal(err)
	}
	if headOpts == nil {
		headOpts = &head.HeadOptions{}
	}
	headOpts.Logger = quietLogger()
	h, err := head.OpenHead(db.FS(), dir+"/wal", headOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	// The gate as the daemon wires it: the store's refusal of writes.
	w, err := NewWriter(Options{UIDs: u, Head: h, Logger: quietLogger(),
		Gate: ingest.NewGate(ingest.GateOptions{Store: db.WriteErr})})
	if err != nil {
		t.Fatal(err)
	}
	return &testStack{uids: u, head: h, w: w}
}

// points returns the head's points of metric with tags, as strings.
func (s *testStack) points(t testing.TB, metric string, tags ...string) []string {
	t.Helper()
	var ut []uid.Tag
	for i := 0; i+1 < len(tags); i += 2 {
		ut = append(ut, uid.Tag{Key: []byte(tags[i]), Value: []byte(tags[i+1])})
	}
	key, err := s.uids.ResolvePoint(context.Background(), nil, []byte(metric), ut)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range s.head.AppendPoints(nil, key, 0, head.MaxTimestamp) {
		pt := parse.Point{Value: p}
		out = append(out, pt.String())
	}
	return out
}
