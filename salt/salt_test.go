package salt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/tsd-db/tsd/internal/invariants"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The hashes below were computed with Java int semantics (signed bytes,
// 32-bit wrap-around, remainder with the dividend's sign) outside Go.
func TestHashVectors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		hash    int32
		b20, b7 int
	}{
		{"000001000001000001", 691019968, 8, 2},
		{"ffffff", 28798, 18, 0},
		{"80ff7f0102030405060708", 101240259, 19, 1},
		{"abcdef123456789abc", -1507359438, 18, 4},
		{"", 1, 1, 1},
	} {
		b := unhex(t, tc.in)
		if h := Hash(HashInit, b); h != tc.hash {
			t.Errorf("Hash(%s) = %d, want %d", tc.in, h, tc.hash)
		}
		s20, _ := New(1, 20)
		s7, _ := New(1, 7)
		if got := s20.Bucket(b); got != tc.b20 {
			t.Errorf("bucket20(%s) = %d, want %d", tc.in, got, tc.b20)
		}
		if got := s7.Bucket(b); got != tc.b7 {
			t.Errorf("bucket7(%s) = %d, want %d", tc.in, got, tc.b7)
		}
	}
	// Negative remainder flips sign: -1507359438 % 1000003 = -354917 in Java.
	s, _ := New(4, 1000003)
	if got := s.Bucket(unhex(t, "abcdef123456789abc")); got != 354917 {
		t.Fatalf("bucket = %d, want 354917", got)
	}
}

// The worked example of docs/formats.md, Row keys: key 00000001 50E22700
// 000001000001 with 20 buckets gets salt 08.
func TestSpecWorkedExample(t *testing.T) {
	s := Default()
	tsuid := unhex(t, "000001000001000001")
	if got := hex.EncodeToString(s.Append(nil, tsuid, 3)); got != "08" {
		t.Fatalf("salt = %s, want 08", got)
	}
	// Incremental hashing over metric then tags matches one pass.
	h := Hash(Hash(HashInit, tsuid[:3]), tsuid[3:])
	if h != 691019968 {
		t.Fatalf("incremental hash = %d", h)
	}
}

func TestSaltBytes(t *testing.T) {
	for _, tc := range []struct {
		width, bucket int
		want          string
	}{
		{0, 20, ""},
		{1, 8, "08"},
		{2, 20, "0014"},
		{3, 0x010203, "010203"},
		{4, 0x01020304, "01020304"},
		// Java masks int shift distances to 5 bits, so wide salts repeat.
		{5, 20, "1400000014"},
		{8, 20, "0000001400000014"},
	} {
		s, err := New(tc.width, 1<<31-1)
		if err != nil {
			t.Fatal(err)
		}
		got := hex.EncodeToString(s.AppendBucket(nil, tc.bucket))
		if got != tc.want {
			t.Errorf("width %d bucket %d: %s, want %s", tc.width, tc.bucket, got, tc.want)
		}
		put := make([]byte, tc.width)
		s.PutBucket(put, tc.bucket)
		if hex.EncodeToString(put) != tc.want {
			t.Errorf("PutBucket width %d: %x", tc.width, put)
		}
		if tc.width > 0 && Decode(put) != tc.bucket {
			t.Errorf("Decode(%x) = %d", put, Decode(put))
		}
	}
}

func TestGlobalAnnotationRowUnsalted(t *testing.T) {
	s := Default()
	if got := s.Append(nil, []byte{0, 0, 0}, 3); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("zero metric salt = %x, want 00", got)
	}
	if got := None().Append([]byte{9}, []byte{0, 0, 1}, 3); !bytes.Equal(got, []byte{9}) {
		t.Fatalf("width 0 appended %x", got)
	}
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct{ w, b int }{{-1, 20}, {9, 20}, {1, 0}, {0, -3}} {
		if _, err := New(tc.w, tc.b); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%d, %d) err = %v", tc.w, tc.b, err)
		}
	}
	s, err := New(0, 20)
	if err != nil || s.Enabled() || s.Width() != 0 || s.Buckets() != 20 {
		t.Fatalf("New(0,20) = %v, %v", s, err)
	}
	if d := Default(); d.Width() != 1 || d.Buckets() != 20 || d.String() != "width=1 buckets=20" {
		t.Fatalf("Default = %v", d)
	}
}

func TestZeroAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	s := Default()
	tsuid := unhex(t, "000001000001000001")
	buf := make([]byte, 0, 16)
	if n := testing.AllocsPerRun(100, func() { buf = s.Append(buf[:0], tsuid, 3) }); n != 0 {
		t.Fatalf("Append allocates %v", n)
	}
}

// TestHashMatchesByteLoop checks the four-byte steps against the plain
// Java loop on every length and byte sign.
func TestHashMatchesByteLoop(t *testing.T) {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(i*37 + 200)
	}
	for n := 0; n <= len(b); n++ {
		want := HashInit
		for _, c := range b[:n] {
			want = 31*want + int32(int8(c))
		}
		if got := Hash(HashInit, b[:n]); got != want {
			t.Fatalf("len %d: %d, want %d", n, got, want)
		}
	}
}
