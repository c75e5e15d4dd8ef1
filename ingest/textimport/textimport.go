package textimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxLineBytes is Options.MaxLineBytes' default.
const DefaultMaxLineBytes = 64 << 10

// Options configure a Reader. The zero value takes the defaults.
type Options struct {
	// MaxTags bounds a point's tags (tsd.storage.max_tags). Default 32.
	MaxTags int
	// AllowSpecialChars lists characters names may hold besides
	// OpenTSDB's (tsd.core.tag.allow_specialchars). Default none.
	AllowSpecialChars string
	// MaxLineBytes bounds a line; a longer one is refused. Default 64 KiB.
	MaxLineBytes int
}

// EnsureDefaults fills zero fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	return o
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	if o.MaxLineBytes < 1 {
		return fmt.Errorf("textimport: MaxLineBytes %d < 1", o.MaxLineBytes)
	}
	return nil
}

// LineError is a refused line.
type LineError struct {
	Line int   // the line's number, from 1
	Err  error // why: the put parser's *telnet.PutError, or the reader's own
}

// Error returns "line N: reason".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the reason.
func (e *LineError) Unwrap() error { return e.Err }

// ErrLineTooLong is the reason of a line over Options.MaxLineBytes.
var ErrLineTooLong = errors.New("line too long")

// errControlByte is the reason of an escaped line holding a byte the
// escapes use.
var errControlByte = errors.New("a line with escapes holds a byte 0x01-0x03")

// Bytes standing for escaped bytes while the put parser reads the line.
const (
	escSpace     = 0x01
	escEqual     = 0x02
	escBackslash = 0x03
)

// Reader reads points from an import stream. Not safe for concurrent use.
type Reader struct {
	opts    Options
	count   countingReader
	lines   parse.LineReader
	put     *telnet.Parser // plain lines
	escPut  *telnet.Parser // escaped lines: the escape bytes allowed
	names   *parse.Names   // the real rules, for unescaped names
	buf     []byte         // "i " + line for the put parser
	nameBuf []byte         // unescaped names
	pt      parse.Point
	bad     error
	err     error
}

// NewReader returns a Reader of r, decompressing it when it starts with
// gzip's magic bytes; opts may be nil for the defaults.
func NewReader(r io.Reader, opts *Options) (*Reader, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	put, err := telnet.NewParser(&telnet.Options{MaxTags: o.MaxTags, AllowSpecialChars: o.AllowSpecialChars})
	if err != nil {
		return nil, err
	}
	escPut, err := telnet.NewParser(&telnet.Options{MaxTags: o.MaxTags,
		AllowSpecialChars: o.AllowSpecialChars + string([]byte{escSpace, escEqual, escBackslash})})
	if err != nil {
		return nil, err
	}
	rd := &Reader{opts: o, put: put, escPut: escPut,
		names: parse.NewNames(uid.NewValidator(uid.RulesOpenTSDB, o.AllowSpecialChars))}
	rd.count.r = r
	br := bufio.NewReaderSize(&rd.count, 64<<10)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		src = zr
	}
	rd.lines.ResetReader(src, o.MaxLineBytes)
	return rd, nil
}

// countingReader counts the bytes read from the input (compressed, for a
// gzip stream), for progress.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// InputBytes returns the bytes read from the input so far (buffered
// ahead of the current line, and compressed for a gzip stream).
func (r *Reader) InputBytes() int64 { return r.count.n }

// Next advances to the next point or refused line; false at the end of
// the stream or when it cannot be read on (Err).
func (r *Reader) Next() bool {
	for r.lines.Next() {
		line := r.lines.Line()
		r.bad = nil
		if r.lines.TooLong() {
			r.bad = &LineError{Line: r.lines.Num(), Err: fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, r.opts.MaxLineBytes)}
			return true
		}
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		if err := r.parse(line); err != nil {
			r.bad = &LineError{Line: r.lines.Num(), Err: err}
		}
		return true
	}
	r.err = r.lines.Err()
	if errors.Is(r.err, gzip.ErrChecksum) || errors.Is(r.err, gzip.ErrHeader) {
		r.err = fmt.Errorf("gzip: %w", r.err)
	}
	return false
}

// parse reads one line into r.pt.
func (r *Reader) parse(line []byte) error {
	r.buf = append(r.buf[:0], "i "...)
	if bytes.IndexByte(line, '\\') < 0 {
		r.buf = append(r.buf, line...)
		return r.put.ParsePut(r.buf, &r.pt)
	}
	for _, c := range line {
		if c >= escSpace && c <= escBackslash {
			return errControlByte
		}
	}
	r.buf = appendEscaped(r.buf, line)
	if err := r.escPut.ParsePut(r.buf, &r.pt); err != nil {
		return err
	}
	return r.unescapeNames()
}

// appendEscaped appends line with each escape as its stand-in byte.
func appendEscaped(dst, line []byte) []byte {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			switch line[i+1] {
			case ' ':
				c, i = escSpace, i+1
			case '=':
				c, i = escEqual, i+1
			case '\\':
				c, i = escBackslash, i+1
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// unescapeNames copies the point's names with their stand-in bytes
// restored, and checks them by the real rules.
func (r *Reader) unescapeNames() error {
	n := len(r.pt.Metric)
	for _, t := range r.pt.Tags {
		n += len(t.Key) + len(t.Value)
	}
	// Room for every name at once: no reallocation below, so the names
	// restored first keep aliasing the buffer.
	if cap(r.nameBuf) < n {
		r.nameBuf = make([]byte, 0, n)
	}
	r.nameBuf = r.nameBuf[:0]
	restore := func(b []byte) []byte {
		start := len(r.nameBuf)
		for _, c := range b {
			switch c {
			case escSpace:
				c = ' '
			case escEqual:
				c = '='
			case escBackslash:
				c = '\\'
			}
			r.nameBuf = append(r.nameBuf, c)
		}
		return r.nameBuf[start:len(r.nameBuf):len(r.nameBuf)]
	}
	r.pt.Metric = restore(r.pt.Metric)
	if err := r.names.Check(uid.Metric, r.pt.Metric); err != nil {
		return &telnet.PutError{Kind: telnet.IllegalArgument, Msg: err.Error()}
	}
	for i := range r.pt.Tags {
		t := &r.pt.Tags[i]
		t.Key, t.Value = restore(t.Key), restore(t.Value)
		if err := r.names.Check(uid.TagK, t.Key); err != nil {
			return &telnet.PutError{Kind: telnet.IllegalArgument, Msg: err.Error()}
		}
		if err := r.names.Check(uid.TagV, t.Value); err != nil {
			return &telnet.PutError{Kind: telnet.IllegalArgument, Msg: err.Error()}
		}
	}
	return nil
}

// Bad returns why the current line is refused (a *LineError), or nil
// when it is a point.
func (r *Reader) Bad() error { return r.bad }

// Point returns the current point when Bad is nil; valid until Next.
func (r *Reader) Point() *parse.Point { return &r.pt }

// Line returns the current line's number.
func (r *Reader) Line() int { return r.lines.Num() }

// Text returns the current line as read (escapes included, no "\n"),
// valid until Next: a writer whose target parses the same format can
// forward it instead of formatting the point again.
func (r *Reader) Text() []byte { return r.lines.Line() }

// Err returns what stopped Next before the stream's end, or nil.
func (r *Reader) Err() error { return r.err }

// Compile-time check: a Reader is a parse.Decoder.
var _ parse.Decoder = (*Reader)(nil)
