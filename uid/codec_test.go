package uid

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tsd-db/tsd/schema"
)

func TestAppendParseID(t *testing.T) {
	for _, tc := range []struct {
		id    ID
		width int
		want  []byte
	}{
		{1, 3, []byte{0, 0, 1}},
		{0xABCDEF, 3, []byte{0xAB, 0xCD, 0xEF}},
		{258, 2, []byte{1, 2}},
		{7, 1, []byte{7}},
		{0x0102030405060708, 8, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
	} {
		got := AppendID([]byte{0xFF}, tc.id, tc.width)
		hexEq(t, "AppendID", got[1:], tc.want)
		id, rest, err := ParseID(append(got[1:], 9), tc.width)
		if err != nil || id != tc.id || !bytes.Equal(rest, []byte{9}) {
			t.Errorf("ParseID(%x, %d) = %d, %x, %v", got[1:], tc.width, id, rest, err)
		}
	}
	if _, _, err := ParseID([]byte{1, 2}, 3); err == nil {
		t.Error("short uid parsed")
	}
	if MaxIDForWidth(3) != 16777215 || MaxIDForWidth(1) != 255 || MaxIDForWidth(8) != 1<<63-1 {
		t.Errorf("MaxIDForWidth: %d %d %d", MaxIDForWidth(3), MaxIDForWidth(1), MaxIDForWidth(8))
	}
}

func TestNameCodec(t *testing.T) {
	for _, tc := range []struct {
		f      schema.Format
		name   string
		stored []byte
	}{
		{schema.FormatOpenTSDB, "sys.cpu", []byte("sys.cpu")},
		{schema.FormatOpenTSDB, "café", []byte{'c', 'a', 'f', 0xE9}},
		{schema.FormatOpenTSDB, "ÿ", []byte{0xFF}},
		{schema.FormatDense, "café", []byte("café")},
		{schema.FormatDense, "中文", []byte("中文")},
	} {
		got, err := EncodeName(tc.f, nil, []byte(tc.name))
		if err != nil {
			t.Fatalf("%s encode %q: %v", tc.f, tc.name, err)
		}
		hexEq(t, tc.f.String()+" "+tc.name, got, tc.stored)
		if back := DecodeName(tc.f, nil, got); string(back) != tc.name {
			t.Errorf("%s decode %x = %q, want %q", tc.f, got, back, tc.name)
		}
	}
	_, err := EncodeName(schema.FormatOpenTSDB, nil, []byte("cpu.中"))
	if !errors.Is(err, ErrNotLatin1) {
		t.Fatalf("encode non-Latin-1 in opentsdb format: %v", err)
	}
	want := `uid: name not representable in Latin-1: name "cpu.中" has '中' (U+4E2D); tables in opentsdb format store names as Latin-1, as OpenTSDB does`
	if err.Error() != want {
		t.Errorf("error text\n got %s\nwant %s", err, want)
	}
	if _, err := EncodeName(schema.FormatOpenTSDB, nil, []byte{'a', 0xC3}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("invalid UTF-8 in opentsdb format: %v", err)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := ParseKind("tags"); err == nil {
		t.Error("ParseKind accepted tags")
	}
}

// FuzzNameCodec: every Latin-1-representable UTF-8 name round-trips through
// the opentsdb encoding, dense is the identity, and nothing panics.
func FuzzNameCodec(f *testing.F) {
	for _, s := range []string{"", "sys.cpu.user", "café", "中文", "\xff\xfe", "a\x00b", "ÿÀ"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, name []byte) {
		d, err := EncodeName(schema.FormatDense, nil, name)
		if err != nil || !bytes.Equal(d, name) || !bytes.Equal(DecodeName(schema.FormatDense, nil, d), name) {
			t.Fatalf("dense not identity on %x: %x %v", name, d, err)
		}
		stored, err := EncodeName(schema.FormatOpenTSDB, nil, name)
		if err != nil {
			if utf8.Valid(name) && !errors.Is(err, ErrNotLatin1) {
				t.Fatalf("valid UTF-8 %q refused with %v", name, err)
			}
			return
		}
		if utf8.RuneCount(name) != len(stored) {
			t.Fatalf("%q stored on %d bytes", name, len(stored))
		}
		if back := DecodeName(schema.FormatOpenTSDB, nil, stored); !bytes.Equal(back, name) {
			t.Fatalf("round trip %q -> %x -> %q", name, stored, back)
		}
	})
}

// FuzzParseID: ParseID never panics and inverts AppendID.
func FuzzParseID(f *testing.F) {
	f.Add([]byte{0, 0, 1}, 3)
	f.Add([]byte{}, 0)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 8)
	f.Fuzz(func(t *testing.T, src []byte, width int) {
		id, rest, err := ParseID(src, width)
		if err != nil {
			return
		}
		if got := AppendID(nil, id, width); !bytes.Equal(got, src[:width]) || len(rest) != len(src)-width {
			t.Fatalf("ParseID(%x, %d) = %d; re-encoded %x", src, width, id, got)
		}
	})
}

func hexEq(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s = %x, want %x", what, got, want)
	}
}
