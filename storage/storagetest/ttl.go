package storagetest

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

func (s *suite) ttlCases() []testCase {
	return []testCase{
		{"ExpiredInvisible", s.testExpiredInvisible},
		{"MixedVersions", s.testTTLMixedVersions},
		{"ReadModifyWriteIgnoresExpired", s.testTTLReadModifyWrite},
		{"WithMaxVersions", s.testTTLWithMaxVersions},
		{"FutureTimestampNotExpired", s.testTTLFuture},
		{"ExpiresWhileStored", s.testExpiresWhileStored},
	}
}

// hoursAgo is a timestamp h hours before the engine clock.
func (s *suite) hoursAgo(h int64) int64 {
	return s.nowMicros() - h*time.Hour.Microseconds()
}

func (s *suite) testExpiredInvisible(t *testing.T) {
	tbl := s.std(t)
	old, fresh := s.hoursAgo(2), s.nowMicros()-10*time.Minute.Microseconds()
	mustPut(t, tbl, "a-old", cell(famTTL, "q", old, "old"), cell(famTTL, "p", old, "old"))
	mustPut(t, tbl, "b-mixed", cell(famTTL, "old", old, "old"), cell(famTTL, "new", fresh, "new"), cell(famA, "q", old, "kept"))
	mustPut(t, tbl, "c-fresh", cell(famTTL, "q", 0, "now"))
	mustPut(t, tbl, "d-old", cell(famTTL, "q", old-1000, "old"))
	wantGet(t, tbl, "a-old", nil)
	wantGet(t, tbl, "d-old", nil)
	want := []storage.Cell{rc("b-mixed", famA, "q", old, "kept"), rc("b-mixed", famTTL, "new", fresh, "new")}
	wantGet(t, tbl, "b-mixed", nil, want...)
	wantGet(t, tbl, "b-mixed", &storage.ReadOptions{Qualifiers: [][]byte{[]byte("old")}})
	cells := mustGet(t, tbl, "c-fresh", nil)
	if len(cells) != 1 || string(cells[0].Value) != "now" {
		t.Fatalf("Get(c-fresh) = %s; want the fresh cell", fmtCells(cells))
	}
	wantRows(t, tbl, nil, "b-mixed", "c-fresh")
	wantRows(t, tbl, &storage.ScanOptions{Reverse: true}, "c-fresh", "b-mixed")
	wantRows(t, tbl, &storage.ScanOptions{Limit: 1}, "b-mixed")
	wantScan(t, tbl, &storage.ScanOptions{Stop: []byte("c")}, want...)
}

func (s *suite) testTTLMixedVersions(t *testing.T) {
	tbl := s.std(t)
	fresh := s.nowMicros() - time.Minute.Microseconds()
	mustPut(t, tbl, "r",
		cell(famTTL, "q", s.hoursAgo(3), "3h"), cell(famTTL, "q", s.hoursAgo(2), "2h"),
		cell(famTTL, "q", fresh, "fresh"), cell(famTTL, "q", fresh-1000, "fresh2"))
	want := []storage.Cell{rc("r", famTTL, "q", fresh, "fresh"), rc("r", famTTL, "q", fresh-1000, "fresh2")}
	wantGet(t, tbl, "r", nil, want...)
	wantScan(t, tbl, nil, want...)
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxTime: fresh - 1000})
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxVersions: 3}, want...)
}

// testTTLReadModifyWrite checks that an expired cell counts as absent for
// Increment, Append and CheckAndPut: read-time TTL holds on every path.
func (s *suite) testTTLReadModifyWrite(t *testing.T) {
	tbl := s.std(t)
	ctx := t.Context()
	old := s.hoursAgo(2)
	mustPut(t, tbl, "r",
		storage.Cell{Family: famTTL, Qualifier: []byte("n"), Timestamp: old, Value: binary.BigEndian.AppendUint64(nil, 100)},
		cell(famTTL, "s", old, "stale"), cell(famTTL, "c", old, "stale"))
	n, err := tbl.Increment(ctx, []byte("r"), famTTL, []byte("n"), 5)
	if err != nil || n != 5 {
		t.Fatalf("Increment over an expired counter = %d, %v; want 5 (expired counts as absent)", n, err)
	}
	v, err := tbl.Append(ctx, []byte("r"), famTTL, []byte("s"), []byte("x"))
	if err != nil || string(v) != "x" {
		t.Fatalf("Append over an expired cell = %q, %v; want \"x\"", v, err)
	}
	err = tbl.CheckAndPut(ctx, []byte("r"), famTTL, []byte("c"), []byte("stale"), []storage.Cell{cell(famA, "won", ms(1), "")})
	wantErr(t, "CheckAndPut expecting an expired value", err, storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, []byte("r"), famTTL, []byte("c"), nil, []storage.Cell{cell(famA, "won", ms(1), "")}); err != nil {
		t.Fatalf("CheckAndPut expecting absent over an expired cell: %v", err)
	}
	cells := mustGet(t, tbl, "r", &storage.ReadOptions{Families: []string{famTTL}})
	if len(cells) != 2 || !bytes.Equal(cells[0].Value, binary.BigEndian.AppendUint64(nil, 5)) || string(cells[1].Value) != "x" {
		t.Fatalf("Get after read-modify-writes = %s; want n=5 and s=x only", fmtCells(cells))
	}
}

// testExpiresWhileStored watches a cell cross its TTL on the engine clock;
// the cell has two seconds left when first read, so a slow machine still
// sees it.
func (s *suite) testExpiresWhileStored(t *testing.T) {
	if s.opts.SkipSlow {
		t.Skip("sleeps; Options.SkipSlow is set")
	}
	spec := storage.TableSpec{Name: "short", Families: []storage.FamilySpec{{Name: "f", TTL: 3 * time.Second}}}
	_, tbl := s.table(t, spec)
	ts := s.nowMicros() - time.Second.Microseconds()
	mustPut(t, tbl, "r", cell("f", "q", ts, "v"))
	wantGet(t, tbl, "r", nil, rc("r", "f", "q", ts, "v"))
	time.Sleep(time.Until(time.UnixMicro(ts).Add(3*time.Second + 500*time.Millisecond)))
	wantGet(t, tbl, "r", nil)
	wantScan(t, tbl, nil)
}

// testTTLWithMaxVersions combines both limits on one family: a version is
// shown only if it is among the newest MaxVersions and younger than TTL.
func (s *suite) testTTLWithMaxVersions(t *testing.T) {
	spec := storage.TableSpec{Name: "both", Families: []storage.FamilySpec{{Name: "f", MaxVersions: 2, TTL: time.Hour}}}
	_, tbl := s.table(t, spec)
	fresh, old := s.nowMicros()-time.Minute.Microseconds(), s.hoursAgo(2)
	mustPut(t, tbl, "r", cell("f", "q", fresh, "1"), cell("f", "q", fresh-1000, "2"), cell("f", "q", fresh-2000, "3"))
	mustPut(t, tbl, "r", cell("f", "p", fresh, "new"), cell("f", "p", old, "old"), cell("f", "p", old-1000, "older"))
	wantGet(t, tbl, "r", nil, rc("r", "f", "p", fresh, "new"), rc("r", "f", "q", fresh, "1"), rc("r", "f", "q", fresh-1000, "2"))
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxTime: fresh - 1000})
	wantGet(t, tbl, "r", &storage.ReadOptions{MaxTime: fresh}, rc("r", "f", "q", fresh-1000, "2"))
}

// testTTLFuture checks that a cell stamped far ahead is not taken as
// expired, as it would be if cell time plus TTL overflowed.
func (s *suite) testTTLFuture(t *testing.T) {
	tbl := s.std(t)
	far := int64(math.MaxInt64 - math.MaxInt64%1000)
	soon := s.nowMicros() + time.Hour.Microseconds()
	mustPut(t, tbl, "r", cell(famTTL, "far", far, "far"), cell(famTTL, "soon", soon, "soon"))
	wantGet(t, tbl, "r", nil, rc("r", famTTL, "far", far, "far"), rc("r", famTTL, "soon", soon, "soon"))
	wantScan(t, tbl, nil, rc("r", famTTL, "far", far, "far"), rc("r", famTTL, "soon", soon, "soon"))
}
