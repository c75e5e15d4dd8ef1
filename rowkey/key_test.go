package rowkey

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
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

// TestSetKeyTime: a key given another hour's time is the key built for
// that hour, salt included; a time out of range or a short key is
// refused and leaves the key as it was.
func TestSetKeyTime(t *testing.T) {
	salted, err := salt.New(1, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range []salt.Salt{salt.None(), salted} {
		l := DefaultLayout()
		l.Salt = sl
		tags := []Tag{{[]byte{0, 0, 2}, []byte{0, 0, 7}}, {[]byte{0, 0, 5}, []byte{1, 0, 0}}}
		tsuid, err := l.AppendTSUID(nil, uid1, tags)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := l.AppendRowKeyFromTSUID(nil, tsuid, 1356998400000)
		for _, ms := range []int64{0, 1356998400000 + 3600000 + 5, 1356998400000 - 7200000, MaxTimestamp} {
			want, _ := l.AppendRowKeyFromTSUID(nil, tsuid, ms)
			if err := l.SetKeyTime(key, ms); err != nil || !bytes.Equal(key, want) {
				t.Fatalf("%v: SetKeyTime(%d) = %x, %v; want %x", sl, ms, key, err, want)
			}
		}
		before := bytes.Clone(key)
		if err := l.SetKeyTime(key, -1); err == nil || !bytes.Equal(key, before) {
			t.Fatalf("%v: time -1 taken: %x, %v", sl, key, err)
		}
		if err := l.SetKeyTime(key[:l.Salt.Width()+l.Widths.Metric+3], 0); err == nil {
			t.Fatalf("%v: a short key taken", sl)
		}
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

// TestBucketRange checks the key range of a metric's rows in one bucket:
// its bytes, the end past the metric when the hour after the span does not
// fit the key, no salt, and that a key lies in the range exactly when it
// is the metric's row in that bucket for an hour of the span.
func TestBucketRange(t *testing.T) {
	const h = 1356998400 // 50E22700
	hx := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	salted := DefaultLayout()
	wide, err := salt.New(1, 256)
	if err != nil {
		t.Fatal(err)
	}
	plain := Layout{Widths: series.DefaultWidths()}
	cases := []struct {
		name        string
		l           Layout
		bucket      int
		metric      string
		start, end  int64
		first, stop string // hex; stop "" is nil
	}{
		{"hours", salted, 8, "000001", h*1000 + 1234, (h+2*3600)*1000 + 99, "0800000150E22700", "0800000150E25130"},
		{"one hour", salted, 3, "000001", h * 1000, h*1000 + 3599_999, "0300000150E22700", "0300000150E23510"},
		{"last hour", salted, 8, "000001", h * 1000, MaxTimestamp, "0800000150E22700", "08000002"},
		{"carry", salted, 8, "FFFFFF", 0, math.MaxInt64, "08FFFFFF00000000", "09"},
		{"end of table", Layout{Widths: series.DefaultWidths(), Salt: wide}, 255, "FFFFFF", 0, MaxTimestamp, "FFFFFFFF00000000", ""},
		{"no salt", plain, 0, "000001", h * 1000, h * 1000, "00000150E22700", "00000150E23510"},
	}
	for _, c := range cases {
		start, stop := c.l.BucketRange(c.bucket, hx(c.metric), c.start, c.end)
		if !bytes.Equal(start, hx(c.first)) || !bytes.Equal(stop, hx(c.stop)) || (c.stop == "") != (stop == nil) {
			t.Errorf("%s: [%X, %X), want [%s, %s)", c.name, start, stop, c.first, c.stop)
		}
	}
	none := Layout{Salt: salt.None()} // width 0, 20 buckets set
	if salted.Buckets() != 20 || plain.Buckets() != 1 || none.Buckets() != 1 {
		t.Errorf("Buckets: %d salted, %d plain, %d unsalted with 20 buckets set", salted.Buckets(), plain.Buckets(), none.Buckets())
	}
	// Every row of three metrics over ten hours, in each bucket's range
	// for hours 3 to 6 of the middle metric, or not.
	metrics := [][]byte{{0, 0, 1}, {0, 0, 2}, {0, 0, 3}}
	for b := range salted.Buckets() {
		start, stop := salted.BucketRange(b, metrics[1], (h+3*3600)*1000+5, (h+6*3600)*1000)
		for mi, m := range metrics {
			for hour := range int64(10) {
				for v := range byte(40) {
					key, err := salted.AppendRowKey(nil, m, (h+hour*3600)*1000, []Tag{{Key: []byte{0, 0, 1}, Value: []byte{0, 0, v}}})
					if err != nil {
						t.Fatal(err)
					}
					in := bytes.Compare(key, start) >= 0 && bytes.Compare(key, stop) < 0
					want := mi == 1 && int(key[0]) == b && hour >= 3 && hour <= 6
					if in != want {
						t.Fatalf("bucket %d: key %X in [%X, %X) is %v, want %v", b, key, start, stop, in, want)
					}
				}
			}
		}
	}
}
