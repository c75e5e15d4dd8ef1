package fsck

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	tsdpebble "github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

var quiet = slog.New(slog.DiscardHandler)

// store is a real embedded store with one series, sys.cpu{host=a}, whose
// hour at h0 holds 1, 2, 3 at +0, +60, +120 s in the store's format.
type store struct {
	data   storage.Table
	u      *uid.UIDs
	ix     *index.Index
	layout rowkey.Layout
	key    []byte
	format schema.Format
	// version is the next put's cell timestamp (µs): a millisecond apart,
	// so a later put is the newer write even when two land in one
	// millisecond, as they did on an idle machine.
	version int64
}

const h0 = int64(1356998400000)

func openStore(t *testing.T, format schema.Format) *store {
	t.Helper()
	ctx := context.Background()
	db, err := tsdpebble.Open(t.TempDir(), &tsdpebble.Options{Logger: quiet, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbls, err := storage.EnsureTables(ctx, db, schema.DataTableSpec(schema.DefaultDataTable), uid.TableSpec("tsdb-uid"), schema.MetaTableSpec(schema.DefaultMetaTable))
	if err != nil {
		t.Fatal(err)
	}
	s := &store{data: tbls[0], format: format, version: (time.Now().UnixMilli() - 1000) * 1000}
	if s.u, err = uid.New(tbls[1], &uid.Options{Widths: series.DefaultWidths(), Format: format, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	if s.ix, err = index.Open(ctx, tbls[2], s.u, &index.Options{Widths: series.DefaultWidths()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.ix.Close() })
	sl, _ := salt.New(1, 4)
	s.layout = rowkey.Layout{Widths: series.DefaultWidths(), Salt: sl}
	s.layout.EnsureDefaults()
	id := func(k uid.Kind, name string) []byte {
		v, err := s.u.Assign(ctx, k, []byte(name))
		if err != nil {
			t.Fatal(err)
		}
		return s.u.AppendID(nil, k, v)
	}
	metric, tags := id(uid.Metric, "sys.cpu"), []rowkey.Tag{{Key: id(uid.TagK, "host"), Value: id(uid.TagV, "a")}}
	if s.key, err = s.layout.AppendRowKey(nil, metric, h0, tags); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ix.Register(ctx, append(append([]byte{}, metric...), append(tags[0].Key, tags[0].Value...)...), h0, h0); err != nil {
		t.Fatal(err)
	}
	pts := []series.Point{series.IntPoint(h0, 1), series.IntPoint(h0+60000, 2), series.IntPoint(h0+120000, 3)}
	c := &checker{opts: Options{Format: format}}
	q, v, err := c.encode(h0/1000, pts, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.put(t, q, v)
	return s
}

func (s *store) put(t *testing.T, q, v []byte) {
	t.Helper()
	s.version += 1000
	if err := s.data.Put(context.Background(), s.key, []storage.Cell{{Family: "t", Qualifier: q, Value: v, Timestamp: s.version}}); err != nil {
		t.Fatal(err)
	}
}

func (s *store) check(t *testing.T, fix, dups bool) *Report {
	t.Helper()
	rep, err := Check(context.Background(), &Options{Data: s.data, Layout: s.layout, Format: s.format, UIDs: s.u,
		Index: s.ix, Fix: fix, ResolveDuplicates: dups, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// points decodes the row as tsd reads it, and returns its data columns.
func (s *store) points(t *testing.T) ([]series.Point, []rowkey.Cell) {
	t.Helper()
	cells, err := s.data.Get(context.Background(), s.key, nil)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		t.Fatal(err)
	}
	var d rowkey.RowDecoder
	pts, _ := d.Decode(nil, h0/1000, cells) // a bad cell is skipped, as readers do
	return pts, cells
}

func sec(offset int, flags byte) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(offset<<4|int(flags)))
}

// TestCheckRepairsRow: a row holding a duplicate, a float of the wrong
// length and a dense column that does not decode is found (three kinds),
// left alone without Fix, and with Fix and ResolveDuplicates rewritten as
// one column in the store's format holding what tsd read before, the
// duplicate's newer write winning; a second check finds nothing.
func TestCheckRepairsRow(t *testing.T) {
	for _, format := range []schema.Format{schema.FormatDense, schema.FormatOpenTSDB} {
		t.Run(format.String(), func(t *testing.T) {
			s := openStore(t, format)
			s.put(t, sec(60, 0), []byte{42}) // +60 s again, newer
			v := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 0}, math.Float32bits(2.5))
			s.put(t, sec(180, 0x0B), v) // 4 bytes announced, 8 stored
			s.put(t, rowkey.AppendDenseQualifier(nil, 9, 9), []byte{1, 2, 3})
			before, _ := s.points(t)
			rep := s.check(t, false, false)
			want := map[Kind]int64{Duplicate: 1, BadValueLength: 1, BadDense: 1}
			for k := Kind(0); k < NumKinds; k++ {
				if rep.Found[k] != want[k] || rep.Fixed[k] != 0 {
					t.Errorf("without Fix: %s found %d fixed %d, want %d found", k, rep.Found[k], rep.Fixed[k], want[k])
				}
			}
			if after, _ := s.points(t); !samePoints(before, after) {
				t.Fatalf("a check without Fix changed the row: %v, was %v", after, before)
			}
			rep = s.check(t, true, false)
			if rep.Fixed[Duplicate] != 0 || rep.Unfixed[Duplicate] != 1 || rep.Fixed[BadValueLength] != 1 || rep.Fixed[BadDense] != 1 {
				t.Errorf("Fix without ResolveDuplicates: fixed %v, unfixed %v", rep.Fixed, rep.Unfixed)
			}
			rep = s.check(t, true, true)
			if rep.Found[Duplicate] != 1 || rep.Fixed[Duplicate] != 1 || rep.Total() != 1 {
				t.Errorf("ResolveDuplicates: found %v, fixed %v", rep.Found, rep.Fixed)
			}
			after, cells := s.points(t)
			wantPts := []series.Point{series.IntPoint(h0, 1), series.IntPoint(h0+60000, 42), series.IntPoint(h0+120000, 3), series.Float32Point(h0+180000, 2.5)}
			if !samePoints(after, wantPts) || !samePoints(before, wantPts) {
				t.Errorf("after the rewrite %v, before %v, want %v", after, before, wantPts)
			}
			wantKind := rowkey.ColumnDense
			if format == schema.FormatOpenTSDB {
				wantKind = rowkey.ColumnCompacted
			}
			if len(cells) != 1 || rowkey.Classify(cells[0].Qualifier) != wantKind {
				t.Errorf("after the rewrite the row has %d cells (first %x), want one %v column", len(cells), cells[0].Qualifier, wantKind)
			}
			if rep := s.check(t, false, false); rep.Total() != 0 {
				t.Errorf("after the repairs: %v", rep.Found)
			}
		})
	}
}

func samePoints(a, b []series.Point) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].T != b[i].T || a[i].Float() != b[i].Float() {
			return false
		}
	}
	return true
}

// TestFindingString is the report's example line.
func TestFindingString(t *testing.T) {
	f := Finding{Kind: BadDense, Row: []byte{1, 2}, Qualifier: []byte{0x80}, Detail: "d", Unfixed: "why"}
	if got := f.String(); got != "row 0102 q=80: d (not fixed: why)" {
		t.Errorf("%q", got)
	}
	f = Finding{Kind: IndexWithoutRows, Row: []byte{1}, Detail: "d", Fixed: true}
	if got := f.String(); got != "series 01: d (fixed)" || !bytes.Contains([]byte(got), []byte("series")) {
		t.Errorf("%q", got)
	}
}
