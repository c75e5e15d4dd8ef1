package bigtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tsd-db/tsd/storage"
)

func cellString(cells []storage.Cell) string {
	var b strings.Builder
	for _, c := range cells {
		fmt.Fprintf(&b, "%s/%s:%s@%d=%s ", c.Row, c.Family, c.Qualifier, c.Timestamp/1000, c.Value)
	}
	return strings.TrimSpace(b.String())
}

func TestGetReturnsStorageOrder(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	// Families listed out of name order: the server returns them by
	// creation order, the contract by name.
	tbl := mustTable(t, db, storage.TableSpec{Name: "tsdb", Families: []storage.FamilySpec{{Name: "z"}, {Name: "a"}, {Name: "m"}}})
	err := tbl.Put(ctx, []byte("r1"), []storage.Cell{
		{Family: "z", Qualifier: []byte("q"), Timestamp: ms(1), Value: []byte("z1")},
		{Family: "a", Qualifier: []byte("b"), Timestamp: ms(1), Value: []byte("ab1")},
		{Family: "a", Qualifier: []byte("a"), Timestamp: ms(1), Value: []byte("aa1")},
		{Family: "a", Qualifier: []byte("a"), Timestamp: ms(3), Value: []byte("aa3")},
		{Family: "m", Qualifier: []byte{}, Timestamp: ms(2), Value: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	cells, err := tbl.Get(ctx, []byte("r1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "r1/a:a@3=aa3 r1/a:a@1=aa1 r1/a:b@1=ab1 r1/m:@2= r1/z:q@1=z1"
	if got := cellString(cells); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	_, err = tbl.Get(ctx, []byte("nope"), nil)
	wantErr(t, err, storage.ErrNotFound)
}

func TestZeroTimestampUsesClock(t *testing.T) {
	ctx := context.Background()
	at := time.UnixMilli(1_700_000_000_123).Add(456 * time.Microsecond)
	db := openEmulated(t, func(o *Options) { o.Clock = func() time.Time { return at } })
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	if err := tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	cells, err := tbl.Get(ctx, []byte("r"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cells[0].Timestamp, int64(1_700_000_000_123_000); got != want {
		t.Fatalf("timestamp %d, want %d (clock truncated to ms)", got, want)
	}
}

func TestFamilyLimitsAppliedAtReadTime(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	// The clock runs 2h ahead of the server: the emulator's garbage
	// collection (real time) keeps cells the contract already hides, so only
	// the read-time filter can hide them.
	clock := now.Add(2 * time.Hour)
	db := openEmulated(t, func(o *Options) { o.Clock = func() time.Time { return clock } })
	tbl := mustTable(t, db, storage.TableSpec{Name: "t", Families: []storage.FamilySpec{
		{Name: "v", MaxVersions: 2},
		{Name: "x", TTL: time.Hour},
	}})
	nowMs := now.UnixMilli()
	var cells []storage.Cell
	for i := int64(1); i <= 4; i++ {
		cells = append(cells, storage.Cell{Family: "v", Qualifier: []byte("q"), Timestamp: ms(i), Value: []byte{byte('0' + i)}})
	}
	cells = append(cells,
		storage.Cell{Family: "x", Qualifier: []byte("old"), Timestamp: ms(nowMs), Value: []byte("old")},           // 2h old by the clock
		storage.Cell{Family: "x", Qualifier: []byte("new"), Timestamp: ms(nowMs + 90*60e3), Value: []byte("new")}, // 30m old
	)
	if err := tbl.Put(ctx, []byte("r"), cells); err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, []byte("r"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("r/v:q@4=4 r/v:q@3=3 r/x:new@%d=new", nowMs+90*60e3)
	if s := cellString(got); s != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
	// A time range never uncovers a version beyond the family's limit.
	got, err = tbl.Get(ctx, []byte("r"), &storage.ReadOptions{Families: []string{"v"}, MaxTime: ms(3)})
	wantErr(t, err, storage.ErrNotFound)
	if len(got) != 0 {
		t.Fatalf("time range uncovered %s", cellString(got))
	}
	// The read's MaxVersions applies after the family's.
	got, err = tbl.Get(ctx, []byte("r"), &storage.ReadOptions{Families: []string{"v"}, MaxVersions: 1})
	if err != nil || cellString(got) != "r/v:q@4=4" {
		t.Fatalf("MaxVersions 1: %s, %v", cellString(got), err)
	}
}

func TestReadOptionsSelectColumns(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	tbl := mustTable(t, db, storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "a"}, {Name: "b"}}})
	var cells []storage.Cell
	for _, f := range []string{"a", "b"} {
		for _, q := range []string{"", "p1", "p2", "q", "\xff", "\xff\x00"} {
			cells = append(cells, storage.Cell{Family: f, Qualifier: []byte(q), Timestamp: ms(5), Value: []byte(q)})
			cells = append(cells, storage.Cell{Family: f, Qualifier: []byte(q), Timestamp: ms(9), Value: []byte(q)})
		}
	}
	if err := tbl.Put(ctx, []byte("r"), cells); err != nil {
		t.Fatal(err)
	}
	quals := func(o *storage.ReadOptions) string {
		got, err := tbl.Get(ctx, []byte("r"), o)
		if err != nil {
			return err.Error()
		}
		var s []string
		for _, c := range got {
			s = append(s, fmt.Sprintf("%s:%x@%d", c.Family, c.Qualifier, c.Timestamp/1000))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		o    storage.ReadOptions
		want string
	}{
		{storage.ReadOptions{Families: []string{"b"}, Qualifiers: [][]byte{[]byte("q"), []byte(""), []byte("q")}, MaxVersions: 1}, "b:@9 b:71@9"},
		{storage.ReadOptions{Families: []string{"a"}, QualifierPrefix: []byte("p"), MinTime: ms(6)}, "a:7031@9 a:7032@9"},
		{storage.ReadOptions{Families: []string{"a"}, QualifierPrefix: []byte("\xff"), MaxTime: ms(6)}, "a:ff@5 a:ff00@5"},
		{storage.ReadOptions{Families: []string{"a"}, QualifierStart: []byte("p2"), QualifierStop: []byte("\xff"), MaxVersions: 1}, "a:7032@9 a:71@9"},
		{storage.ReadOptions{Families: []string{"a"}, QualifierStop: []byte{}}, storage.ErrNotFound.Error()},
		{storage.ReadOptions{Qualifiers: [][]byte{[]byte("\xff\x00")}, MinTime: 5001, MaxTime: 9001}, "a:ff00@9 b:ff00@9"},
	} {
		if got := quals(&tc.o); !strings.Contains(got, tc.want) {
			t.Errorf("%+v:\n got  %s\n want %s", tc.o, got, tc.want)
		}
	}
}

func TestScanRangesRegexLimitReverseAndChunks(t *testing.T) {
	ctx := context.Background()
	// Tiny chunks force every scan across several ReadRows requests.
	db := openEmulated(t, func(o *Options) { o.ScanChunkRows = 3; o.ScanChunkBytes = 64 })
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	var muts []storage.Mutation
	var keys []string
	for i := 0; i < 26; i++ {
		k := string([]byte{byte('a' + i), byte(0x80 + i)})
		keys = append(keys, k)
		muts = append(muts, storage.Mutation{Row: []byte(k), Cells: []storage.Cell{
			{Family: "f", Qualifier: []byte("q1"), Timestamp: ms(1), Value: bytes.Repeat([]byte("v"), 40)},
			{Family: "f", Qualifier: []byte("q2"), Timestamp: ms(1), Value: []byte("w")},
		}})
	}
	if err := tbl.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(keys)
	slices.Reverse(rev)
	for _, tc := range []struct {
		name string
		o    storage.ScanOptions
		want []string
	}{
		{"all", storage.ScanOptions{}, keys},
		{"range", storage.ScanOptions{Start: []byte("c"), Stop: []byte("k")}, keys[2:10]},
		{"limit", storage.ScanOptions{Start: []byte("c"), Limit: 7}, keys[2:9]},
		{"reverse", storage.ScanOptions{Reverse: true}, rev},
		{"reverse range limit", storage.ScanOptions{Start: []byte("c"), Stop: []byte("k"), Reverse: true, Limit: 4}, rev[16:20]},
		{"regex high bytes", storage.ScanOptions{RowRegex: "[a-e][\x82-\x83]"}, keys[2:4]},
		{"regex quoted raw bytes", storage.ScanOptions{RowRegex: `\Qd` + "\x83" + `\E`}, keys[3:4]},
		{"regex is whole-key", storage.ScanOptions{RowRegex: "d"}, nil},
		{"regex dot matches any byte", storage.ScanOptions{RowRegex: "z."}, keys[25:]},
		{"empty stop", storage.ScanOptions{Stop: []byte{}}, nil},
		{"start after stop", storage.ScanOptions{Start: []byte("k"), Stop: []byte("c")}, nil},
		{"filter drops rows before limit", storage.ScanOptions{RowRegex: "[h-z].", Limit: 2}, keys[7:9]},
	} {
		got := rowsOf(scanAll(t, tbl, &tc.o))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q want %q", tc.name, got, tc.want)
		}
	}
	cells := scanAll(t, tbl, &storage.ScanOptions{Start: []byte("b"), Stop: []byte("c"), ReadOptions: storage.ReadOptions{Qualifiers: [][]byte{[]byte("q2")}}})
	if len(cells) != 1 || string(cells[0].Value) != "w" {
		t.Errorf("qualifier filter in scan: %s", cellString(cells))
	}
}

func TestRowRegexRewrite(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", `\A(?:abc)\z`},
		{"a.c", `\A(?:a(?s:.)c)\z`},
		{`\Q` + "\xa1." + `\E`, `\A(?:\x{a1}\.)\z`},
		{"[\x80-\xff]", `\A(?:[\x80-\x{ff}])\z`},
		{"[^a]", `\A(?:[\x00-` + "`" + `b-\x{ff}])\z`},
		{`\pN`, `\A(?:[0-9\x{b2}-\x{b3}\x{b9}\x{bc}-\x{be}])\z`},
		{`a\x{100}|b`, `\A(?:[^\x00-\x{ff}]|b)\z`}, // the whole literal can never match
	} {
		got, err := rowRegex(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("rowRegex(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	_, err := rowRegex("a(b")
	wantErr(t, err, storage.ErrInvalidArgument)
}

func TestInvalidRegexFailsBeforeAnyRequest(t *testing.T) {
	srv := startEmulator(t, "127.0.0.1:0")
	db := openAt(t, srv.Addr)
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	srv.Close() // a request would now fail as retryable, not invalid
	s := tbl.Scan(context.Background(), &storage.ScanOptions{RowRegex: "(("})
	if s.Next() {
		t.Fatal("Next on an invalid regex")
	}
	wantErr(t, s.Close(), storage.ErrInvalidArgument)
}

func TestBadInputIsClassified(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	wantErr(t, tbl.Put(ctx, nil, []storage.Cell{{Family: "f"}}), storage.ErrInvalidArgument)
	wantErr(t, tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "nope"}}), storage.ErrNotFound)
	wantErr(t, tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Timestamp: 1500}}), storage.ErrInvalidArgument)
	wantErr(t, tbl.Apply(ctx, []storage.Mutation{{Row: []byte("ok"), Cells: []storage.Cell{{Family: "f"}}}, {Row: nil}}), storage.ErrInvalidArgument)
	_, err := tbl.Get(ctx, []byte("r"), &storage.ReadOptions{Families: []string{"nope"}})
	wantErr(t, err, storage.ErrNotFound)
	_, err = tbl.Increment(ctx, []byte("r"), "", nil, 1)
	wantErr(t, err, storage.ErrNotFound)
	wantErr(t, db.EnsureTable(ctx, storage.TableSpec{Name: "", Families: []storage.FamilySpec{{Name: "f"}}}), storage.ErrInvalidArgument)
	wantErr(t, db.EnsureTable(ctx, storage.TableSpec{Name: "t2", Families: []storage.FamilySpec{{Name: ""}}}), storage.ErrInvalidArgument)
	_, err = db.Table(ctx, "missing")
	wantErr(t, err, storage.ErrNotFound)
	if _, err := tbl.Get(ctx, []byte("ok"), nil); err == nil {
		t.Fatal("Apply wrote a row although another mutation was invalid")
	}
}

func TestIncrementAppendCheckAndPut(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	tbl := mustTable(t, db, oneFamily("tsdb-uid", "id", 0, 0))
	row, q := []byte("\x00"), []byte("metrics")
	for i, want := range []int64{5, 3, 1003} {
		got, err := tbl.Increment(ctx, row, "id", q, []int64{5, -2, 1000}[i])
		if err != nil || got != want {
			t.Fatalf("increment %d: %d, %v; want %d", i, got, err, want)
		}
	}
	cells, err := tbl.Get(ctx, row, &storage.ReadOptions{MaxVersions: 1})
	if err != nil || binary.BigEndian.Uint64(cells[0].Value) != 1003 {
		t.Fatalf("stored counter: %v %v", cells, err)
	}
	if err := tbl.Put(ctx, []byte("bad"), []storage.Cell{{Family: "id", Qualifier: q, Value: []byte("xyz")}}); err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Increment(ctx, []byte("bad"), "id", q, 1)
	wantErr(t, err, storage.ErrInvalidArgument)

	v, err := tbl.Append(ctx, []byte("a"), "id", q, []byte("ab"))
	if err != nil || string(v) != "ab" {
		t.Fatalf("append: %q %v", v, err)
	}
	if v, err = tbl.Append(ctx, []byte("a"), "id", q, []byte("\x00c")); err != nil || string(v) != "ab\x00c" {
		t.Fatalf("append: %q %v", v, err)
	}

	name := []byte("sys.cpu")
	put := func(v string) []storage.Cell {
		return []storage.Cell{{Family: "id", Qualifier: []byte("x"), Value: []byte(v)}}
	}
	if err := tbl.CheckAndPut(ctx, name, "id", []byte("x"), nil, put("\x00\x00\x01")); err != nil {
		t.Fatalf("absent: %v", err)
	}
	wantErr(t, tbl.CheckAndPut(ctx, name, "id", []byte("x"), nil, put("\x00\x00\x02")), storage.ErrConflict)
	wantErr(t, tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte("\x00\x00"), put("2")), storage.ErrConflict)
	wantErr(t, tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte{}, put("2")), storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte("\x00\x00\x01"), put("")); err != nil {
		t.Fatalf("equal: %v", err)
	}
	// Present and empty is not absent.
	wantErr(t, tbl.CheckAndPut(ctx, name, "id", []byte("x"), nil, put("3")), storage.ErrConflict)
	if err := tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte{}, put("4")); err != nil {
		t.Fatalf("empty expected: %v", err)
	}
	// Nothing to write: a pure check.
	if err := tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte("4"), nil); err != nil {
		t.Fatalf("check only: %v", err)
	}
	wantErr(t, tbl.CheckAndPut(ctx, name, "id", []byte("x"), []byte("5"), nil), storage.ErrConflict)
}

func TestExpiredCellCountsAsAbsent(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	db := openEmulated(t, func(o *Options) { o.Clock = func() time.Time { return now.Add(2 * time.Hour) } })
	tbl := mustTable(t, db, oneFamily("t", "f", 0, time.Hour))
	old := ms(now.UnixMilli())
	cnt := make([]byte, 8)
	binary.BigEndian.PutUint64(cnt, 41)
	err := tbl.Put(ctx, []byte("r"), []storage.Cell{
		{Family: "f", Qualifier: []byte("n"), Timestamp: old, Value: cnt},
		{Family: "f", Qualifier: []byte("s"), Timestamp: old, Value: []byte("stale")},
		{Family: "f", Qualifier: []byte("c"), Timestamp: old, Value: []byte("stale")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tbl.Increment(ctx, []byte("r"), "f", []byte("n"), 1); err != nil || n != 1 {
		t.Fatalf("increment over expired counter: %d, %v; want 1", n, err)
	}
	if v, err := tbl.Append(ctx, []byte("r"), "f", []byte("s"), []byte("x")); err != nil || string(v) != "x" {
		t.Fatalf("append over expired value: %q, %v", v, err)
	}
	if err := tbl.CheckAndPut(ctx, []byte("r"), "f", []byte("c"), nil, []storage.Cell{{Family: "f", Qualifier: []byte("c"), Value: []byte("new")}}); err != nil {
		t.Fatalf("check-and-put absent over expired cell: %v", err)
	}
}

func TestDeletesLeaveNoTombstone(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	tbl := mustTable(t, db, storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "a"}, {Name: "b"}}})
	put := func(f, q string, t0 int64) storage.Cell {
		return storage.Cell{Family: f, Qualifier: []byte(q), Timestamp: ms(t0), Value: []byte(fmt.Sprint(t0))}
	}
	r := []byte("r")
	all := []storage.Cell{put("a", "x", 1), put("a", "x", 2), put("a", "x", 3), put("a", "y", 2), put("b", "z", 2), put("b", "z", 7)}
	if err := tbl.Put(ctx, r, all); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		dels []storage.Deletion
		want string
	}{
		{[]storage.Deletion{{Kind: storage.DeleteColumn, Family: "a", Qualifier: []byte("x"), MinTime: ms(2), MaxTime: ms(2) + 1000}},
			"r/a:x@3=3 r/a:x@1=1 r/a:y@2=2 r/b:z@7=7 r/b:z@2=2"},
		{[]storage.Deletion{{Kind: storage.DeleteFamily, Family: "a", MinTime: 1500, MaxTime: ms(3)}},
			"r/a:x@3=3 r/a:x@1=1 r/b:z@7=7 r/b:z@2=2"},
		{[]storage.Deletion{{Kind: storage.DeleteFamily, Family: "b", MinTime: ms(5)}},
			"r/a:x@3=3 r/a:x@1=1 r/b:z@2=2"},
		{[]storage.Deletion{{Kind: storage.DeleteColumn, Family: "a", Qualifier: []byte("x")}, {Kind: storage.DeleteFamily, Family: "b"}}, ""},
	}
	for i, st := range steps {
		if err := tbl.Delete(ctx, r, st.dels...); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, _ := tbl.Get(ctx, r, nil)
		if s := cellString(got); s != st.want {
			t.Fatalf("step %d: got  %s\nwant %s", i, s, st.want)
		}
	}
	// No tombstone: an older put after the deletes is visible.
	if err := tbl.Put(ctx, r, []storage.Cell{put("a", "x", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, []byte("other")); err != nil {
		t.Fatal(err)
	}
	got, _ := tbl.Get(ctx, r, nil)
	if s := cellString(got); s != "r/a:x@1=1" {
		t.Fatalf("after re-put: %s", s)
	}
	if err := tbl.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, err := tbl.Get(ctx, r, nil)
	wantErr(t, err, storage.ErrNotFound)
}

func TestApplyChunksLargeBatches(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t, func(o *Options) { o.BulkMaxMutations = 7; o.BulkMaxBytes = 300 })
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	var muts []storage.Mutation
	for i := 0; i < 120; i++ {
		muts = append(muts, storage.Mutation{Row: []byte(fmt.Sprintf("r%03d", i)), Cells: []storage.Cell{
			{Family: "f", Qualifier: []byte("a"), Value: []byte(fmt.Sprint(i))},
			{Family: "f", Qualifier: []byte("b"), Value: bytes.Repeat([]byte{'x'}, i)},
		}})
	}
	muts = append(muts, storage.Mutation{Row: []byte("r000"), Deletes: []storage.Deletion{{Kind: storage.DeleteRow}},
		Cells: []storage.Cell{{Family: "f", Qualifier: []byte("only"), Value: []byte("z")}}})
	if err := tbl.Apply(ctx, muts); err != nil {
		t.Fatal(err)
	}
	cells := scanAll(t, tbl, nil)
	if rows := rowsOf(cells); len(rows) != 120 {
		t.Fatalf("%d rows, want 120", len(rows))
	}
	if cellString(cells[:1]) == "" || string(cells[0].Qualifier) != "only" || string(cells[1].Row) != "r001" {
		t.Fatalf("deletes before puts in one row: %s", cellString(cells[:2]))
	}
	if got := string(cells[len(cells)-2].Value); got != "119" {
		t.Fatalf("last row value %q", got)
	}
}

func TestDeleteRangePrefixAndScan(t *testing.T) {
	ctx := context.Background()
	for _, create := range []bool{true, false} {
		t.Run(fmt.Sprintf("create_tables=%v", create), func(t *testing.T) {
			var rpcs rpcCounter
			srv := startEmulator(t, "127.0.0.1:0", rpcs.option())
			setup := openAt(t, srv.Addr)
			mustTable(t, setup, oneFamily("t", "f", 0, 0))
			db := openAt(t, srv.Addr, func(o *Options) { o.CreateTables = Bool(create); o.ScanChunkRows = 4 })
			tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
			var muts []storage.Mutation
			for _, p := range []string{"a", "b", "b\xff", "c"} {
				for i := 0; i < 10; i++ {
					muts = append(muts, storage.Mutation{Row: []byte(fmt.Sprintf("%s%02d", p, i)), Cells: []storage.Cell{{Family: "f", Value: []byte("v")}}})
				}
			}
			if err := tbl.Apply(ctx, muts); err != nil {
				t.Fatal(err)
			}
			check := func(what string, want int) {
				t.Helper()
				if got := len(rowsOf(scanAll(t, tbl, nil))); got != want {
					t.Fatalf("%s: %d rows left, want %d", what, got, want)
				}
			}
			if err := tbl.DeleteRange(ctx, []byte("b"), []byte("c")); err != nil { // prefix "b", incl. "b\xff.."
				t.Fatal(err)
			}
			check("prefix b", 20)
			if err := tbl.DeleteRange(ctx, []byte("a03"), []byte("a07")); err != nil { // not a prefix
				t.Fatal(err)
			}
			check("a03..a07", 16)
			if err := tbl.DeleteRange(ctx, []byte("c05"), nil); err != nil {
				t.Fatal(err)
			}
			check("c05..", 11)
			if err := tbl.DeleteRange(ctx, nil, nil); err != nil {
				t.Fatal(err)
			}
			check("all", 0)
			drops := rpcs.count("DropRowRange")
			if want := map[bool]int{true: 2, false: 0}[create]; drops != want {
				t.Fatalf("%d DropRowRange requests, want %d (prefix b and the whole table only)", drops, want)
			}
		})
	}
}

func TestWholePrefix(t *testing.T) {
	for _, tc := range []struct {
		start, stop []byte
		ok          bool
	}{
		{nil, nil, true},
		{[]byte("ab"), []byte("ac"), true},
		{[]byte("a\xff"), []byte("b"), true},
		{[]byte("\xff\xff"), nil, true},
		{[]byte("ab"), []byte("ad"), false},
		{[]byte("ab"), nil, false},
		{nil, []byte("a"), false},
	} {
		if _, ok := wholePrefix(tc.start, tc.stop); ok != tc.ok {
			t.Errorf("wholePrefix(%q, %q) = %v", tc.start, tc.stop, ok)
		}
	}
}

func TestCreateTablesOffNamesWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	var rpcs rpcCounter
	srv := startEmulator(t, "127.0.0.1:0", rpcs.option())
	db := openAt(t, srv.Addr, func(o *Options) { o.CreateTables = Bool(false) })
	err := db.EnsureTable(ctx, oneFamily("tsdb", "t", 0, 0))
	wantErr(t, err, storage.ErrNotFound)
	if !strings.Contains(err.Error(), `table "tsdb"`) || !strings.Contains(err.Error(), "create_tables") {
		t.Fatalf("error does not name the table and the setting: %v", err)
	}
	admin := openAt(t, srv.Addr)
	mustTable(t, admin, oneFamily("tsdb", "t", 0, 0))
	err = db.EnsureTable(ctx, storage.TableSpec{Name: "tsdb", Families: []storage.FamilySpec{{Name: "t"}, {Name: "a", TTL: time.Hour}}})
	wantErr(t, err, storage.ErrNotFound)
	if !strings.Contains(err.Error(), `family "a"`) || !strings.Contains(err.Error(), `"tsdb"`) {
		t.Fatalf("error does not name the table and family: %v", err)
	}
	if err := db.EnsureTable(ctx, oneFamily("tsdb", "t", 3, time.Hour)); err != nil {
		t.Fatalf("existing table and family: %v", err)
	}
	specs, err := db.Tables(ctx)
	if err != nil || len(specs) != 1 || specs[0].Families[0].MaxVersions != 0 {
		t.Fatalf("create_tables=false changed the policy: %+v %v", specs, err)
	}
	if c, m := rpcs.count("CreateTable"), rpcs.count("ModifyColumnFamilies"); c != 1 || m != 0 {
		t.Fatalf("%d CreateTable and %d ModifyColumnFamilies; want only the admin DB's one CreateTable", c, m)
	}
}

func TestEnsureTableRoundTripsPolicies(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	spec := storage.TableSpec{Name: "tsdb-meta", Families: []storage.FamilySpec{
		{Name: "name", MaxVersions: 1},
		{Name: "b.x-y", TTL: 1500 * time.Millisecond},
		{Name: "a", MaxVersions: 3, TTL: 24 * time.Hour},
	}}
	mustTable(t, db, spec)
	spec.Families[0] = storage.FamilySpec{Name: "name", TTL: time.Minute}
	spec.Families = append(spec.Families, storage.FamilySpec{Name: "c"})
	tbl := mustTable(t, db, spec)
	want := storage.TableSpec{Name: "tsdb-meta", Families: []storage.FamilySpec{
		{Name: "a", MaxVersions: 3, TTL: 24 * time.Hour},
		{Name: "b.x-y", TTL: 1500 * time.Millisecond},
		{Name: "c"},
		{Name: "name", TTL: time.Minute},
	}}
	if got := tbl.Spec(); !reflect.DeepEqual(got, want) {
		t.Fatalf("spec %+v\nwant %+v", got, want)
	}
	mustTable(t, db, oneFamily("tsdb", "t", 0, 0))
	specs, err := db.Tables(ctx)
	if err != nil || len(specs) != 2 || specs[0].Name != "tsdb" || !reflect.DeepEqual(specs[1], want) {
		t.Fatalf("tables %+v %v", specs, err)
	}
	if err := db.DropTable(ctx, "tsdb"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Table(ctx, "tsdb")
	wantErr(t, err, storage.ErrNotFound)
	wantErr(t, db.DropTable(ctx, "tsdb"), storage.ErrNotFound)
}

func TestClosedAndCancelled(t *testing.T) {
	db := openEmulated(t)
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tbl.Get(cctx, []byte("r"), nil)
	wantErr(t, err, context.Canceled)
	wantErr(t, tbl.Put(cctx, []byte("r"), []storage.Cell{{Family: "f"}}), context.Canceled)
	s := tbl.Scan(cctx, nil)
	if s.Next() {
		t.Fatal("scan on a cancelled context")
	}
	wantErr(t, s.Err(), context.Canceled)

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	ctx := context.Background()
	wantErr(t, tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f"}}), storage.ErrClosed)
	_, err = tbl.Get(ctx, []byte("r"), nil)
	wantErr(t, err, storage.ErrClosed)
	_, err = db.Tables(ctx)
	wantErr(t, err, storage.ErrClosed)
	_, err = db.Table(ctx, "t")
	wantErr(t, err, storage.ErrClosed)
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{Instance: "i"},
		{Project: "p"},
		{Project: "p", Instance: "i", BulkMaxMutations: 100_001},
		{Project: "p", Instance: "i", MaxAttempts: -1},
		{Project: "p", Instance: "i", BackoffBase: time.Second, BackoffMax: time.Millisecond},
	} {
		_, err := Open(context.Background(), o)
		wantErr(t, err, storage.ErrInvalidArgument)
	}
	o := Options{}.EnsureDefaults()
	if !*o.CreateTables || o.BulkMaxMutations != 20_000 || o.MaxAttempts != 4 || o.Clock == nil {
		t.Fatalf("defaults: %+v", o)
	}
}

// TestClientOptionsConn opens through ClientOptions with a connection the
// test dials itself, the way a caller with its own gRPC setup would.
func TestClientOptionsConn(t *testing.T) {
	srv := startEmulator(t, "127.0.0.1:0")
	conn, err := grpc.NewClient("passthrough:///"+srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	db, err := Open(ctx, Options{Project: "p", Instance: "i", DisableClientMetrics: true,
		ClientOptions: []option.ClientOption{option.WithGRPCConn(conn)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	if err := tbl.Put(ctx, []byte("r"), []storage.Cell{{Family: "f", Timestamp: ms(7), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if cells, err := tbl.Get(ctx, []byte("r"), nil); err != nil || cellString(cells) != "r/f:@7=v" {
		t.Fatalf("get: %s %v", cellString(cells), err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestTTLCutoffBoundaries(t *testing.T) {
	for _, tc := range []struct {
		now  int64
		ttl  time.Duration
		want int64
	}{
		{ms(10), 2 * time.Millisecond, ms(9)},    // ts 8ms is exactly ttl old: expired
		{ms(10), 1500 * time.Microsecond, ms(9)}, // 8.5ms is the edge
		{ms(10), 1000 * time.Millisecond, 0},     // nothing can be that old
		{ms(10), time.Millisecond - 1, ms(10)},   // TTL in whole microseconds: 999µs
		{ms(1 << 40), time.Hour, ms(1<<40) - ms(3_600_000) + ms(1)},
	} {
		if got := ttlCutoff(tc.now, tc.ttl); got != tc.want {
			t.Errorf("ttlCutoff(%d, %v) = %d, want %d", tc.now, tc.ttl, got, tc.want)
		}
	}
	if got := ceilMilli(1<<63 - 1); got%1000 != 0 || got <= 0 {
		t.Errorf("ceilMilli(max) = %d", got)
	}
}

// TestApplySameRowInOrder checks that mutations of one row inside one Apply
// take effect in order, although Bigtable applies a request's entries in
// any order: the later write of a timestamp wins, and a family-range delete
// sees columns an earlier mutation of the batch wrote.
func TestApplySameRowInOrder(t *testing.T) {
	ctx := context.Background()
	db := openEmulated(t)
	tbl := mustTable(t, db, oneFamily("t", "f", 0, 0))
	cell := func(q, v string) []storage.Cell {
		return []storage.Cell{{Family: "f", Qualifier: []byte(q), Timestamp: ms(5), Value: []byte(v)}}
	}
	err := tbl.Apply(ctx, []storage.Mutation{
		{Row: []byte("r"), Cells: cell("a", "first")},
		{Row: []byte("s"), Cells: cell("a", "other")},
		{Row: []byte("r"), Cells: cell("a", "second")},
		{Row: []byte("r"), Cells: cell("b", "gone")},
		{Row: []byte("r"), Deletes: []storage.Deletion{{Kind: storage.DeleteFamily, Family: "f", Qualifier: nil, MinTime: ms(5), MaxTime: ms(6)}},
			Cells: cell("c", "kept")},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, []byte("r"), nil)
	if s := cellString(got); err != nil || s != "r/f:c@5=kept" {
		t.Fatalf("got %s, %v; want only r/f:c@5=kept", s, err)
	}
	err = tbl.Apply(ctx, []storage.Mutation{{Row: []byte("r"), Cells: cell("a", "1")}, {Row: []byte("r"), Cells: cell("a", "2")}})
	got, _ = tbl.Get(ctx, []byte("r"), &storage.ReadOptions{Qualifiers: [][]byte{[]byte("a")}})
	if s := cellString(got); err != nil || s != "r/f:a@5=2" {
		t.Fatalf("got %s, %v; want the later write", s, err)
	}
}
