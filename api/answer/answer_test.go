package answer

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/tsd-db/tsd/api/admit"
)

// counter is a Source of a JSON array of the numbers 0..n-1 that fails
// with err when it reaches failAt, if err is set.
type counter struct {
	n, i, failAt int
	err          error
	opened       bool
}

func (c *counter) Next(_ context.Context, dst []byte, max int) ([]byte, bool, error) {
	if !c.opened {
		dst, c.opened = append(dst, '['), true
	}
	for ; c.i < c.n && len(dst) < max; c.i++ {
		if c.err != nil && c.i == c.failAt {
			return dst, false, c.err
		}
		if c.i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(c.i), 10)
	}
	if c.i < c.n {
		return dst, false, nil
	}
	return append(dst, ']'), true, nil
}

func (c *counter) Close() {}

// TestBodyReadMatchesWriteTo reads a streamed body through Read (any
// reader other than fasthttp's chunk writer), plain and gzipped, and a
// cut one, with the slot taken and given back for every part.
func TestBodyReadMatchesWriteTo(t *testing.T) {
	const n = 100_000 // some 590 KB: about ten parts
	var want bytes.Buffer
	want.WriteString("[")
	for i := range n {
		if i > 0 {
			want.WriteString(",")
		}
		want.WriteString(strconv.Itoa(i))
	}
	want.WriteString("]")
	lim, err := admit.New(admit.Options{MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, gz := range []bool{false, true} {
		for _, how := range []string{"WriteTo", "Read"} {
			src := &counter{n: n}
			part, done, _ := src.Next(context.Background(), nil, ChunkSize)
			if done {
				t.Fatal("the first part is the whole answer")
			}
			b := &body{src: src, o: Options{Context: context.Background(), Limiter: lim}, gzip: gz, part: &part, first: true}
			var got bytes.Buffer
			if how == "Read" {
				_, err = io.Copy(&got, struct{ io.Reader }{b}) // hide WriteTo
			} else {
				_, err = b.WriteTo(&got)
			}
			b.Close()
			if err != nil {
				t.Fatalf("gzip %v %s: %v", gz, how, err)
			}
			out := got.Bytes()
			if gz {
				zr, err := gzip.NewReader(&got)
				if err != nil {
					t.Fatal(err)
				}
				if out, err = io.ReadAll(zr); err != nil {
					t.Fatalf("gzip %v %s: %v", gz, how, err)
				}
			}
			if !bytes.Equal(out, want.Bytes()) {
				t.Errorf("gzip %v %s: %d bytes, want %d", gz, how, len(out), want.Len())
			}
			if s := lim.Stats(); s.Running != 0 {
				t.Errorf("slots %+v after the answer", s)
			}
		}
	}
	// Cut after some parts: the error text ends what was sent, the
	// failure is reported once, and the body ends with the error.
	boom := errors.New("boom")
	var reported []error
	src := &counter{n: n, failAt: 50_000, err: boom}
	part, _, _ := src.Next(context.Background(), nil, ChunkSize)
	b := &body{src: src, part: &part, first: true, o: Options{Context: context.Background(),
		Cut:    func(dst []byte, err error) []byte { return append(dst, "\nERR "+err.Error()...) },
		Failed: func(err error) { reported = append(reported, err) }}}
	var got bytes.Buffer
	_, err = b.WriteTo(&got)
	b.Close()
	if !errors.Is(err, boom) || len(reported) != 1 || !bytes.HasSuffix(got.Bytes(), []byte("\nERR boom")) ||
		!bytes.HasPrefix(want.Bytes(), bytes.TrimSuffix(got.Bytes(), []byte("\nERR boom"))) {
		t.Errorf("cut: %v, reported %v, %d bytes ending %q", err, reported, got.Len(), got.Bytes()[max(0, got.Len()-20):])
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("peer gone") }

// TestBodyEnded: Close tells Options.Ended once how a streamed answer
// ended: nil when every part was written, the Source's error for a cut,
// the write's error for a failed write, and errNotSent when the body was
// released unwritten.
func TestBodyEnded(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		src  *counter
		w    io.Writer // nil: never written
		want func(error) bool
	}{
		{"whole", &counter{n: 100_000}, io.Discard, func(err error) bool { return err == nil }},
		{"cut", &counter{n: 100_000, failAt: 50_000, err: boom}, io.Discard, func(err error) bool { return errors.Is(err, boom) }},
		{"write failed", &counter{n: 100_000}, failWriter{}, func(err error) bool { return err != nil && err.Error() == "peer gone" }},
		{"unwritten", &counter{n: 100_000}, nil, func(err error) bool { return errors.Is(err, errNotSent) }},
	} {
		var ended []error
		part, _, _ := tc.src.Next(context.Background(), nil, ChunkSize)
		b := &body{src: tc.src, part: &part, first: true, o: Options{Context: context.Background(),
			Ended: func(err error, streamed bool) {
				if !streamed {
					t.Errorf("%s: told streamed=false", tc.name)
				}
				ended = append(ended, err)
			}}}
		if tc.w != nil {
			b.WriteTo(tc.w)
		}
		b.Close()
		b.Close()
		if len(ended) != 1 || !tc.want(ended[0]) {
			t.Errorf("%s: Ended told %v, want once", tc.name, ended)
		}
	}
}

// TestAppendGzipInline: AppendGzip appends a gzip stream of the body and
// starts no goroutine (fasthttp's gzip of a whole body starts workers and
// hands each body to one).
func TestAppendGzipInline(t *testing.T) {
	body := bytes.Repeat([]byte(`[1700000000,"1"],`), 200)
	n := runtime.NumGoroutine()
	out := AppendGzip([]byte("x"), body)
	// More after is a goroutine started; fewer is an earlier test's
	// goroutine ending meanwhile.
	if got := runtime.NumGoroutine(); got > n {
		t.Errorf("goroutines %d after, %d before", got, n)
	}
	if out[0] != 'x' {
		t.Fatalf("dst not kept: %q", out[:1])
	}
	zr, err := gzip.NewReader(bytes.NewReader(out[1:]))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("inflated %d bytes, err %v; want the %d bytes given", len(got), err, len(body))
	}
}

func BenchmarkAppendGzip(b *testing.B) {
	body := bytes.Repeat([]byte(`[1700000000,"1"],`), 200)
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		dst = AppendGzip(dst[:0], body)
	}
}
