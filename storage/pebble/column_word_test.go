package pebble

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

// TestEmitColumnWord checks emit's word-at-a-time column comparison and
// qualifier decoding against ParseCellKey on keys around its limits:
// families whose code fills 2, 8 and 9 bytes, qualifiers of 0 to 7 bytes
// holding 0x00, 0xFE and 0xFF, and versions of one column next to each
// other, so version counting sees both equal and different columns.
func TestEmitColumnWord(t *testing.T) {
	st := newTableState(storage.TableSpec{Name: "w", Families: []storage.FamilySpec{
		{Name: "abcdefg", MaxVersions: 2}, {Name: "abcdefgh"}, {Name: "t", MaxVersions: 1},
	}})
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0x00, 0x01, 0x02, 0x7F, 0xFD, 0xFE, 0xFF}
	row := []byte{0x00, 0xFF, 0x01}
	var keys [][]byte
	for range 3000 {
		q := make([]byte, rng.IntN(8))
		for i := range q {
			q[i] = alphabet[rng.IntN(len(alphabet))]
		}
		fam := st.fams[rng.IntN(len(st.fams))].name
		for v := range 1 + rng.IntN(3) {
			keys = append(keys, AppendCellKey(nil, 5, row, fam, q, int64(1000*(1+v))))
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)

	// No options takes emitPlain; an empty qualifier prefix, which passes
	// every cell, takes the general path.
	for _, o := range []*storage.ReadOptions{nil, {QualifierPrefix: []byte{}}} {
		checkEmit(t, st, row, keys, o)
	}
}

func checkEmit(t *testing.T, st *tableState, row []byte, keys [][]byte, o *storage.ReadOptions) {
	s := &scanner{famIdx: -1, t: &table{name: "w"}, st: st}
	s.f.reset(st, o, 0)
	s.countVersions = true
	s.rowPrefix, s.row = appendRowPrefix(nil, 5, row), row
	if s.f.plain != (o == nil) {
		t.Fatalf("options %+v: plain = %v", o, s.f.plain)
	}
	var prev []byte
	versions := 0
	for _, key := range keys {
		want, _, err := ParseCellKey(nil, key)
		if err != nil {
			t.Fatal(err)
		}
		col := key[want.RowPrefixLen : len(key)-tsLen]
		if bytes.Equal(col, prev) {
			versions++
		} else {
			prev, versions = col, 0
		}
		fi := st.fams[st.family(want.Family)]
		visible := fi.maxVersions == 0 || versions < fi.maxVersions
		if got := s.emit(key); got != visible {
			t.Fatalf("key %x: emit = %v, want %v (version %d of %d)", key, got, visible, versions, fi.maxVersions)
		}
		if s.err != nil {
			t.Fatalf("key %x: %v", key, s.err)
		}
		if !visible {
			continue
		}
		if s.famName != string(want.Family) || !bytes.Equal(s.qual, want.Qualifier) || s.ts != want.Timestamp {
			t.Fatalf("key %x: got %s %x %d, want %s %x %d", key, s.famName, s.qual, s.ts,
				want.Family, want.Qualifier, want.Timestamp)
		}
	}
}
