package rowkey

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
)

func TestRowKeyRoundTrip(t *testing.T) {
	l := DefaultLayout()
	tags := []Tag{{[]byte{0, 0, 9}, []byte{0, 0, 1}}, {[]byte{0, 0, 2}, []byte{0, 0, 7}}, {[]byte{0, 0, 5}, []byte{1, 0, 0}}}
	key, err := l.AppendRowKey([]byte("x"), uid1, 1356998400500+3599000, tags)
	if err != nil {
		t.Fatal(err)
	}
	key = key[1:]
	want := "00000150E22700" + "000002000007" + "000005010000" + "000009000001"
	if hexOf(key[1:]) != want {
		t.Fatalf("key %s, want ..%s", hexOf(key), want)
	}
	k, err := l.ParseRowKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Metric, uid1) || k.Base != 1356998400 || k.NumTags() != 3 || k.BaseMs() != 1356998400000 {
		t.Fatalf("parsed %+v", k)
	}
	if tk, tv := k.Tag(1); hexOf(tk) != "000005" || hexOf(tv) != "010000" {
		t.Fatalf("tag 1 = %s=%s", hexOf(tk), hexOf(tv))
	}
	tsuid := k.AppendTSUID(nil)
	if string(AppendTSUIDHex(nil, tsuid)) != "000001"+want[14:] {
		t.Fatalf("tsuid %s", AppendTSUIDHex(nil, tsuid))
	}
	back, err := AppendParseTSUIDHex(nil, strings.ToLower(string(AppendTSUIDHex(nil, tsuid))))
	if err != nil || !bytes.Equal(back, tsuid) {
		t.Fatalf("hex round trip %x %v", back, err)
	}
	fromTSUID, err := l.AppendRowKeyFromTSUID(nil, tsuid, 1356998400500)
	if err != nil || !bytes.Equal(fromTSUID, key) {
		t.Fatalf("from tsuid %x, %v; want %x", fromTSUID, err, key)
	}
	t2, _ := l.AppendTSUID(nil, uid1, tags)
	if !bytes.Equal(t2, tsuid) {
		t.Fatalf("AppendTSUID %x", t2)
	}
}

func TestRowKeyZeroTagsAndWidths(t *testing.T) {
	l := Layout{Widths: series.Widths{Metric: 1, TagK: 2, TagV: 4}, Salt: salt.None()}
	l.EnsureDefaults()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	key, err := l.AppendRowKey(nil, []byte{7}, 3600*1000*5+1, nil)
	if err != nil || hexOf(key) != "0700004650" {
		t.Fatalf("zero tags %s %v", hexOf(key), err)
	}
	if k, err := l.ParseRowKey(key); err != nil || k.NumTags() != 0 {
		t.Fatalf("parse zero tags %+v %v", k, err)
	}
	_, err = l.AppendRowKey(nil, []byte{7}, 0, []Tag{{[]byte{1, 2}, []byte{1, 2, 3}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("wrong tagv width: %v", err)
	}
	if _, err := l.AppendRowKey(nil, []byte{7, 7}, 0, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("wrong metric width: %v", err)
	}
	if _, err := l.AppendRowKey(nil, []byte{7}, -1, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative time: %v", err)
	}
	if _, err := l.AppendRowKey(nil, []byte{7}, MaxTimestamp+1, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("time beyond 2106: %v", err)
	}
}

func TestTooManyTags(t *testing.T) {
	l := DefaultLayout()
	tags := make([]Tag, 33)
	for i := range tags {
		tags[i] = Tag{[]byte{0, 0, byte(i + 1)}, uid1}
	}
	_, err := l.AppendRowKey(nil, uid1, 0, tags)
	if !errors.Is(err, ErrTooManyTags) || !strings.Contains(err.Error(), "33 maximum allowed: 32") {
		t.Fatalf("33 tags: %v", err)
	}
	if _, err := l.AppendRowKey(nil, uid1, 0, tags[:32]); err != nil {
		t.Fatalf("32 tags: %v", err)
	}
	dup := []Tag{{uid1, uid1}, {uid1, []byte{0, 0, 2}}}
	if _, err := l.AppendRowKey(nil, uid1, 0, dup); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "duplicate tag key uid 000001") {
		t.Fatalf("duplicate tag key: %v", err)
	}
}

func TestParseRowKeyRejects(t *testing.T) {
	l := DefaultLayout()
	for _, tc := range []struct{ key, want string }{
		{"0800000150E22700000001", "length 11"},
		{"0900000150E22700000001000001", "salt does not match"},
		{"0800000150E22701000001000001", "not a whole hour"},
		{"0300000150E22700000002000001000001000001", "out of order"},
		{"", "length 0"},
	} {
		_, err := l.ParseRowKey(unhexT(t, tc.key))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRowKey(%s) = %v, want %q", tc.key, err, tc.want)
		}
	}
	if _, _, err := l.ParseTSUID(unhexT(t, "00000100")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short tsuid: %v", err)
	}
	if _, err := AppendParseTSUIDHex(nil, "0G"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad hex: %v", err)
	}
}

func TestGlobalAnnotationRow(t *testing.T) {
	l := DefaultLayout()
	key := l.AppendGlobalAnnotationRowKey(nil, 1356998400123)
	if hexOf(key) != "0000000050E22700" {
		t.Fatalf("global annotation row %s", hexOf(key))
	}
	if _, err := l.ParseRowKey(key); err != nil {
		t.Fatalf("zero metric rows are unsalted: %v", err)
	}
	if p := l.AppendKeyPrefix(nil, 19, uid1, 1356998400123); hexOf(p) != "1300000150E22700" {
		t.Fatalf("prefix %s", hexOf(p))
	}
}

func TestKeyCodecsZeroAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	l := DefaultLayout()
	tags := []Tag{{[]byte{0, 0, 9}, uid1}, {[]byte{0, 0, 2}, uid1}}
	buf := make([]byte, 0, 64)
	tsuid, _ := l.AppendTSUID(nil, uid1, tags)
	var q, v []byte
	p := series.Float64Point(0, 1.5)
	allocs := testing.AllocsPerRun(200, func() {
		buf, _ = l.AppendRowKey(buf[:0], uid1, 1356998400000, tags)
		_, _ = l.ParseRowKey(buf)
		buf, _ = l.AppendRowKeyFromTSUID(buf[:0], tsuid, 1356998400000)
		q, _ = AppendQualifier(q[:0], NewQualifier(1500, ValueFlags(p)))
		v = AppendValue(v[:0], p)
		_, _ = ParseSingle(0, q, v)
	})
	if allocs != 0 {
		t.Fatalf("key, qualifier and value codecs allocate %v per run", allocs)
	}
}
