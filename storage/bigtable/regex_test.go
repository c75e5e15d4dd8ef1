package bigtable

import (
	"errors"
	"testing"

	"rsc.io/binaryregexp"

	"github.com/tsd-db/tsd/storage"
)

// FuzzRowRegex checks that the rewritten row regex is pure ASCII and matches
// exactly the keys the original pattern matches under the contract's
// reading (Latin-1, dot-all, whole key), and that a bad pattern is
// ErrInvalidArgument, never a panic.
func FuzzRowRegex(f *testing.F) {
	for _, seed := range [][2]string{
		{"abc", "abc"}, {"a.c", "a\nc"}, {`\Q` + "\xa1." + `\E`, "\xa1."}, {"[\x80-\xff]+", "\x80\xff"},
		{"[^a]", "\xe9"}, {`\pL+`, "a\xe9"}, {`(?i)\xe9`, "\xc9"}, {`a\x{100}|b`, "b"}, {"((", ""},
		{`^\x00\x00\x01.{4}$`, "\x00\x00\x01\xff\xff\xff\xff"}, {`\b\w+\b`, "sys.cpu"}, {"(?:)", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		got, err := rowRegex(pattern)
		if err != nil {
			if !errors.Is(err, storage.ErrInvalidArgument) {
				t.Fatalf("rowRegex(%q) error %v is not ErrInvalidArgument", pattern, err)
			}
			return
		}
		for i := 0; i < len(got); i++ {
			if got[i] >= 0x80 {
				t.Fatalf("rowRegex(%q) = %q is not ASCII", pattern, got)
			}
		}
		ref, err := binaryregexp.Compile(`\A(?s:` + latin1ToUTF8(pattern) + `)\z`)
		if err != nil {
			t.Skip("the reference cannot wrap this pattern")
		}
		re, err := binaryregexp.Compile(got)
		if err != nil {
			t.Fatalf("rewritten %q of %q does not compile: %v", got, pattern, err)
		}
		for _, k := range []string{key, pattern, ""} {
			if ref.MatchString(k) != re.MatchString(k) {
				t.Fatalf("pattern %q key %q: original %v, rewritten %q %v", pattern, k, ref.MatchString(k), got, re.MatchString(k))
			}
		}
	})
}
