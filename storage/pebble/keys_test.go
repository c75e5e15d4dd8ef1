package pebble

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestEscapedOrder(t *testing.T) {
	// Raw order must equal encoded order, including 0x00/0xFF edges.
	vals := [][]byte{{}, {0}, {0, 0}, {0, 1}, {0, 0xFF}, {1}, []byte("a"), []byte("a\x00"),
		[]byte("a\x00\x01"), []byte("a\x01"), []byte("ab"), {0xFD}, {0xFD, 0xFF}, {0xFE}, {0xFE, 0},
		{0xFE, 0xFE}, {0xFE, 0xFF}, {0xFF}, {0xFF, 0}, {0xFF, 0xFE}, {0xFF, 0xFF}}
	for i, a := range vals {
		ea := appendField(nil, a)
		if fieldLen(ea) != len(ea) {
			t.Errorf("fieldLen(%x) = %d, want %d", ea, fieldLen(ea), len(ea))
		}
		for _, b := range vals[i+1:] {
			if eb := appendField(nil, b); bytes.Compare(ea, eb) >= 0 {
				t.Errorf("field(%x)=%x not below field(%x)=%x", a, ea, b, eb)
			}
		}
	}
	if n := len(appendField(nil, make([]byte, 26))); n != 27 {
		t.Errorf("a 26-byte row of zeros codes to %d bytes, want 27", n)
	}
}

func TestCellKeyOrder(t *testing.T) {
	// Order is row, family, qualifier, then timestamp descending.
	keys := [][]byte{
		AppendCellKey(nil, 7, []byte("r"), "a", []byte("q"), 9000),
		AppendCellKey(nil, 7, []byte("r"), "a", []byte("q"), 1000),
		AppendCellKey(nil, 7, []byte("r"), "a", []byte("q\x00"), 5000),
		AppendCellKey(nil, 7, []byte("r"), "ab", nil, 5000),
		AppendCellKey(nil, 7, []byte("r"), "b", nil, 5000),
		AppendCellKey(nil, 7, []byte("r\x00"), "a", nil, 5000),
		AppendCellKey(nil, 7, []byte("r\x01"), "a", nil, 5000),
		AppendCellKey(nil, 8, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 0xDF, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 0xE0, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 0xFF, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 0x100, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 0x10000, []byte{0}, "a", nil, 5000),
		AppendCellKey(nil, 1<<32-1, []byte{0}, "a", nil, 5000),
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Errorf("key %d %x not below key %d %x", i-1, keys[i-1], i, keys[i])
		}
	}
}

func TestSplitAndSuccessor(t *testing.T) {
	// The id 0x100 holds a 0x00 byte and the row codes 0xFE as 0xFF 0x00:
	// split must take neither for the row terminator.
	k := AppendCellKey(nil, 0x100, []byte("row\xfe\x00"), "f", []byte("q"), 1000)
	rp := appendRowPrefix(nil, 0x100, []byte("row\xfe\x00"))
	if n := split(k); n != len(rp) {
		t.Fatalf("split = %d, want %d", n, len(rp))
	}
	if n := split(rp); n != len(rp) {
		t.Fatalf("split(prefix) = %d, want %d", n, len(rp))
	}
	succ := immediateSuccessor(nil, rp)
	if split(succ) != len(succ) || bytes.Compare(succ, k) <= 0 {
		t.Fatalf("successor %x must be a prefix key above %x", succ, k)
	}
	next := appendRowPrefix(nil, 0x100, []byte("row\xfe\x00\x00"))
	if bytes.Compare(succ, next) > 0 {
		t.Fatalf("successor %x skips the next row %x", succ, next)
	}
}

func TestParseCellKeyRejects(t *testing.T) {
	good := AppendCellKey(nil, 3, []byte("r"), "f", []byte("q"), 2000)
	bad := [][]byte{
		nil, {idBase}, good[:len(good)-1], append(bytes.Clone(good), 0),
		append([]byte{tagCatalog}, good[1:]...),
		append(bytes.Clone(good[:len(good)-tsLen]), 0, 0, 0, 0, 0, 0, 0),                              // beyond int64 microseconds
		append(appendTablePrefix(nil, 3), 'r', 0xFF, 7, 0, 'f', 0, 'q', 0, 0x80, 0, 0, 0, 0, 0, 0, 0), // bad code
		append([]byte{idLong + 1, 3}, good[1:]...),                                                    // id not minimal
	}
	for _, k := range bad {
		if _, _, err := ParseCellKey(nil, k); err == nil {
			t.Errorf("ParseCellKey(%x) accepted a malformed key", k)
		}
	}
}

func FuzzCellKey(f *testing.F) {
	f.Add(uint32(1), []byte("row"), "f", []byte("q"), int64(1000))
	f.Add(uint32(0x0100), []byte{0, 1, 0xFF, 0}, "fam-1.x", []byte{0, 0, 1}, int64(0))
	f.Add(uint32(1<<32-1), []byte{0xFF}, "_", []byte{}, int64(1<<63-1)/1000*1000)
	f.Fuzz(func(t *testing.T, id uint32, row []byte, fam string, q []byte, ts int64) {
		ts -= ts % 1000 // the contract's timestamps are whole milliseconds
		if ts < 0 || !validFamilyBytes(fam) {
			// Arbitrary bytes must still parse without a panic.
			_, _, _ = ParseCellKey(nil, append(append(row, fam...), q...))
			_ = split(row)
			return
		}
		key := AppendCellKey(nil, id, row, fam, q, ts)
		k, _, err := ParseCellKey(nil, key)
		if err != nil {
			t.Fatalf("round trip of %x: %v", key, err)
		}
		if k.ID != id || !bytes.Equal(k.Row, row) || string(k.Family) != fam ||
			!bytes.Equal(k.Qualifier, q) || k.Timestamp != ts {
			t.Fatalf("round trip mismatch: %+v", k)
		}
		if split(key) != k.RowPrefixLen {
			t.Fatalf("split %d, row prefix %d", split(key), k.RowPrefixLen)
		}
	})
}

// validFamilyBytes mirrors the contract's family rule closely enough for the
// codec: non-empty and free of 0x00.
func validFamilyBytes(s string) bool {
	return s != "" && bytes.IndexByte([]byte(s), 0) < 0
}

func FuzzParseCellKey(f *testing.F) {
	f.Add(AppendCellKey(nil, 1, []byte("row"), "f", []byte("q"), 1000))
	f.Add(AppendCellKey(nil, 9, []byte{0, 0xFF, 0}, "g", []byte{0}, 0))
	f.Add([]byte{idLong + 2, 1, 0, 's', 0xFF, 0, 0, 'f', 0, 0, 0x80, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key []byte) {
		_ = split(key)
		_ = immediateSuccessor(nil, key)
		k, _, err := ParseCellKey(nil, key)
		if err != nil {
			return
		}
		// A key that parses has exactly one encoding.
		again := AppendCellKey(nil, k.ID, k.Row, string(k.Family), k.Qualifier, k.Timestamp)
		if !bytes.Equal(again, key) {
			t.Fatalf("parse(%x) re-encodes as %x", key, again)
		}
	})
}

func TestColumnTimeBoundsRoundToMilliseconds(t *testing.T) {
	col := appendColumnPrefix(appendRowPrefix(nil, 1, []byte("r")), "f", []byte("q"))
	key := func(ts int64) []byte { return appendTimestamp(bytes.Clone(col), ts) }
	cases := []struct {
		minT, maxT int64
		in, out    []int64
	}{
		{1500, 0, []int64{2000, 1 << 40}, []int64{0, 1000}},
		{0, 2500, []int64{0, 1000, 2000}, []int64{3000}},
		{1001, 3000, []int64{2000}, []int64{1000, 3000}},
		{1<<63 - 1, 0, nil, []int64{0, (1<<63 - 1) / 1000 * 1000}},
	}
	for _, c := range cases {
		lo, hi := columnTimeBounds(bytes.Clone(col), nil, c.minT, c.maxT)
		inRange := func(ts int64) bool {
			k := key(ts)
			return bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0
		}
		for _, ts := range c.in {
			if !inRange(ts) {
				t.Errorf("[%d, %d): ts %d outside key range", c.minT, c.maxT, ts)
			}
		}
		for _, ts := range c.out {
			if inRange(ts) {
				t.Errorf("[%d, %d): ts %d inside key range", c.minT, c.maxT, ts)
			}
		}
	}
}

// parseFieldBytes is parseField's byte loop alone, the reference for its
// word-at-a-time path.
func parseFieldBytes(src []byte) (val, rest []byte, err error) {
	var out []byte
	for i := 0; i < len(src); i++ {
		switch b := src[i]; b {
		case fieldEnd:
			return out, src[i+1:], nil
		case fieldWide:
			if i+1 == len(src) || src[i+1] > 1 {
				return nil, nil, errBadKey
			}
			i++
			out = append(out, 0xFE+src[i])
		default:
			out = append(out, b-1)
		}
	}
	return nil, nil, errBadKey
}

// TestParseFieldWords: parseField decodes like the byte loop on codes
// where 0x00 and 0xFF fall at every position of the 8-byte words, on
// malformed codes, and on random fields appendField wrote.
func TestParseFieldWords(t *testing.T) {
	check := func(src []byte) {
		t.Helper()
		prefix := []byte("kept")
		got, dst, rest, err := parseField(append([]byte(nil), prefix...), src)
		want, wantRest, wantErr := parseFieldBytes(src)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) || !bytes.Equal(rest, wantRest) ||
			!bytes.Equal(dst[:len(prefix)], prefix) {
			t.Fatalf("parseField(%x) = %x rest %x err %v; want %x rest %x err %v", src, got, rest, err, want, wantRest, wantErr)
		}
	}
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for _, special := range []byte{0x00, 0xFF, 0x01, 0xFE} {
				src := bytes.Repeat([]byte{0x41}, n)
				src[pos] = special
				check(src)
				check(append(src, 0x00))
				check(append(append(src, 0xFF, 0x01), 0x00))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		raw := make([]byte, r.IntN(40))
		for i := range raw {
			raw[i] = byte(r.IntN(256))
			if r.IntN(4) == 0 {
				raw[i] = []byte{0x00, 0xFE, 0xFF}[r.IntN(3)]
			}
		}
		code := appendField(nil, raw)
		val, _, rest, err := parseField(nil, append(code, 0x42))
		if err != nil || !bytes.Equal(val, raw) || !bytes.Equal(rest, []byte{0x42}) {
			t.Fatalf("round trip of %x: %x rest %x err %v", raw, val, rest, err)
		}
		check(code[:r.IntN(len(code)+1)])
	}
}
