package index

import (
	"context"
	"errors"
	"testing"

	"github.com/tsd-db/tsd/storage/storagetest"
	"github.com/tsd-db/tsd/uid"
)

func TestRegisterLookup(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	a := s.tsuid(t, "sys.cpu", "host=web01", "dc=lga")
	b := s.tsuid(t, "sys.cpu", "host=web02", "dc=lga")
	ida := mustRegister(t, ix, a, 10*hourMs, 12*hourMs+5)
	idb := mustRegister(t, ix, b, 11*hourMs, 11*hourMs)
	if ida == 0 || idb == 0 || ida == idb {
		t.Fatalf("ids %d %d: want distinct non-zero", ida, idb)
	}
	if again := mustRegister(t, ix, a, 9*hourMs, 9*hourMs); again != ida {
		t.Fatalf("second registration got id %d, want %d", again, ida)
	}
	if id, ok := ix.Lookup(a); !ok || id != ida {
		t.Fatalf("Lookup = %d %v, want %d", id, ok, ida)
	}
	got, ok := ix.Series(ida)
	want := Series{ID: ida, TSUID: string(a), First: 9 * 3600, Last: 12 * 3600, HasSpan: true}
	if !ok || got != want {
		t.Fatalf("Series = %+v, want %+v", got, want)
	}
	if err := ix.RegisterSeries(b); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 2 {
		t.Fatalf("Len = %d, want 2", ix.Len())
	}
}

func TestRegisterSeriesHasNoSpan(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	k := s.tsuid(t, "m", "a=b")
	if err := ix.RegisterSeries(k); err != nil {
		t.Fatal(err)
	}
	id, _ := ix.Lookup(k)
	if got, _ := ix.Series(id); got.HasSpan {
		t.Fatalf("RegisterSeries gave a span: %+v", got)
	}
	if !ix.Touch(k, 5*hourMs+1) {
		t.Fatal("Touch of a known series reported unknown")
	}
	got, _ := ix.Series(id)
	slack := int64(DefaultLastSlack.Hours())
	if !got.HasSpan || got.First != 5*3600 || got.Last != (5+slack)*3600 {
		t.Fatalf("after Touch: %+v, want first hour 5, last 5+%d", got, slack)
	}
	if ix.Touch(s.tsuid(t, "m", "a=c"), 0) {
		t.Fatal("Touch of an unknown series reported known")
	}
}

func TestBadTSUID(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	for name, k := range map[string][]byte{
		"short":        {0, 0},
		"half pair":    {0, 0, 1, 0, 0, 1, 0},
		"metric zero":  {0, 0, 0},
		"tagk zero":    {0, 0, 1, 0, 0, 0, 0, 0, 1},
		"out of order": {0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0, 1, 0, 0, 1},
		"repeated key": {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 2},
	} {
		if err := ix.RegisterSeries(k); !errors.Is(err, ErrBadTSUID) {
			t.Errorf("%s %x: err %v, want ErrBadTSUID", name, k, err)
		}
	}
	if ix.Len() != 0 {
		t.Fatalf("Len = %d after bad registrations", ix.Len())
	}
}

func TestPersistReload(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	keys := [][]byte{s.tsuid(t, "m1", "host=a"), s.tsuid(t, "m1", "host=b"), s.tsuid(t, "m2")}
	ids := make([]SeriesID, len(keys))
	for i, k := range keys {
		ids[i] = mustRegister(t, ix, k, int64(i)*hourMs, int64(i+1)*hourMs)
	}
	ix.Touch(keys[0], 40*hourMs)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re := s.open(t, nil)
	if re.Len() != len(keys) {
		t.Fatalf("reloaded %d series, want %d", re.Len(), len(keys))
	}
	for i, k := range keys {
		id, ok := re.Lookup(k)
		if !ok || id != ids[i] {
			t.Fatalf("series %d: id %d %v after reload, want %d", i, id, ok, ids[i])
		}
	}
	got, _ := re.Series(ids[0])
	if got.First != 0 || got.Last != (40+int64(DefaultLastSlack.Hours()))*3600 {
		t.Fatalf("reloaded span %+v: want the touched extension", got)
	}
	b, err := re.Postings(context.Background(), s.assign(t, 0, "m1"), nil)
	if err != nil || b.GetCardinality() != 2 {
		t.Fatalf("m1 postings after reload: %v %v", b, err)
	}
}

func TestRegisterMany(t *testing.T) {
	s := openMemStore(t)
	ctx := context.Background()
	ix := s.open(t, nil)
	known := s.tsuid(t, "m", "host=known")
	kid := mustRegister(t, ix, known, 5*hourMs, 5*hourMs)
	var regs []Registration
	for i := range 50 {
		k := s.tsuid(t, "m", "host=h"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		regs = append(regs, Registration{TSUID: k, FirstMs: int64(i) * hourMs, LastMs: int64(i) * hourMs})
	}
	regs = append(regs,
		Registration{TSUID: regs[0].TSUID, FirstMs: 70 * hourMs, LastMs: 70 * hourMs}, // a duplicate widens
		Registration{TSUID: known, FirstMs: 2 * hourMs, LastMs: 3 * hourMs})
	if err := ix.RegisterMany(ctx, regs); err != nil {
		t.Fatal(err)
	}
	bad := append(regs[:1:1], Registration{TSUID: []byte{0, 0, 0}})
	if err := ix.RegisterMany(ctx, bad); !errors.Is(err, ErrBadTSUID) {
		t.Fatalf("bad TSUID in a batch: err %v", err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re := s.open(t, nil)
	if re.Len() != 51 {
		t.Fatalf("reloaded %d series, want 51", re.Len())
	}
	id, _ := re.Lookup(regs[0].TSUID)
	if got, _ := re.Series(id); got.First != 0 || got.Last != 70*3600 {
		t.Fatalf("duplicate registration: span %+v, want hours 0..70", got)
	}
	if got, _ := re.Series(kid); got.First != 2*3600 || got.Last != 5*3600 {
		t.Fatalf("known series widened by the batch: %+v, want hours 2..5", got)
	}
}

// TestMetricSeries counts a metric's series, 0 for an unknown metric and
// for NameKey.
func TestMetricSeries(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	for _, host := range []string{"host=a", "host=b", "host=c"} {
		if err := ix.RegisterSeries(s.tsuid(t, "m1", host)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.RegisterSeries(s.tsuid(t, "m2", "host=a")); err != nil {
		t.Fatal(err)
	}
	m1, m2, m3 := s.assign(t, uid.Metric, "m1"), s.assign(t, uid.Metric, "m2"), s.assign(t, uid.Metric, "m3")
	if a, b, c, all := ix.MetricSeries(m1), ix.MetricSeries(m2), ix.MetricSeries(m3), ix.MetricSeries(NameKey); a != 3 || b != 1 || c != 0 || all != 0 {
		t.Errorf("MetricSeries m1 %d m2 %d m3 %d NameKey %d, want 3 1 0 0", a, b, c, all)
	}
}

// TestReloadRowsCutIntoBatches reloads series whose rows (id, first and
// last hour) every scan delivers a cell at a time, as a row larger than the
// scan's byte bound arrives: each row's batches make one series, with its
// id and span.
func TestReloadRowsCutIntoBatches(t *testing.T) {
	s := openStore(t)
	ix := s.open(t, nil)
	keys := [][]byte{s.tsuid(t, "m1", "host=a"), s.tsuid(t, "m1", "host=b"), s.tsuid(t, "m2")}
	ids := make([]SeriesID, len(keys))
	for i, k := range keys {
		ids[i] = mustRegister(t, ix, k, int64(i)*hourMs, int64(i+1)*hourMs)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	whole := s.open(t, nil)
	cut, err := Open(context.Background(), storagetest.CutRows(s.meta, 1), s.uids, manual())
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	if cut.Len() != len(keys) || cut.Stats().Corrupt != 0 {
		t.Fatalf("reloaded %d series, %d corrupt, want %d and none", cut.Len(), cut.Stats().Corrupt, len(keys))
	}
	for i, k := range keys {
		id, ok := cut.Lookup(k)
		got, _ := cut.Series(id)
		want, _ := whole.Series(ids[i])
		if !ok || id != ids[i] || got != want {
			t.Fatalf("series %d: id %d %v, %+v after a cut reload; want %d, %+v", i, id, ok, got, ids[i], want)
		}
	}
}
