package parse

import (
	"bytes"
	"io"
)

// DefaultReadSize is the first buffer size of a streaming LineReader; the
// buffer doubles up to the line limit when a line needs it.
const DefaultReadSize = 64 << 10

// maxEmptyReads bounds successive (0, nil) reads before io.ErrNoProgress.
const maxEmptyReads = 100

// LineReader splits a body or a stream into lines. The zero value is
// empty; Reset or ResetReader starts it. Not safe for concurrent use.
//
// Line returns a slice of the body (Reset) or of the reader's buffer
// (ResetReader), valid until the next Next or Extend call.
type LineReader struct {
	r      io.Reader
	buf    []byte // streaming: owned buffer (full length), data == buf[:len(data)]
	data   []byte
	pos    int // first unconsumed byte of data
	start  int // current line: data[start:end]
	end    int
	first  int  // end of the current line's first physical line (Rewind)
	hadNL  bool // the current line ended with '\n'
	scan   int  // data[pos:scan] is known to hold no '\n'
	max    int
	num    int // current line's number
	next   int // next physical line's number
	long   bool
	skip   bool // streaming: discard through the next '\n' first
	eof    bool
	stream bool
	err    error
}

// Reset reads lines from body without copying. max bounds a line's length
// in bytes, without its "\n"; max <= 0 means no limit.
func (l *LineReader) Reset(body []byte, max int) {
	l.reset(max)
	l.data, l.eof = body, true
}

// ResetReader reads lines from r through the reader's reused buffer. max
// bounds a line's length in bytes, without its "\n"; max <= 0 means no
// limit (a stream's memory then grows with its longest line).
func (l *LineReader) ResetReader(r io.Reader, max int) {
	l.reset(max)
	l.r, l.stream = r, true
	l.data = l.buf[:0]
}

func (l *LineReader) reset(max int) {
	if max <= 0 {
		max = int(^uint(0) >> 2)
	}
	buf := l.buf
	*l = LineReader{buf: buf, max: max, next: 1}
}

// Next advances to the next line and reports whether there is one. It
// returns false at the end of the input or on a read error (Err).
func (l *LineReader) Next() bool {
	l.long = false
	if l.skip && !l.discard() {
		return false
	}
	for {
		if nl := bytes.IndexByte(l.data[l.scan:], '\n'); nl >= 0 {
			return l.take(l.scan+nl, true)
		}
		l.scan = len(l.data)
		if len(l.data)-l.pos > l.max {
			return l.takeLong()
		}
		if l.eof {
			if l.pos >= len(l.data) {
				return false
			}
			return l.take(len(l.data), false)
		}
		if !l.fill(l.pos) {
			return false
		}
	}
}

// take makes data[pos:end] the current line.
func (l *LineReader) take(end int, nl bool) bool {
	l.start, l.end, l.first, l.hadNL = l.pos, end, end, nl
	l.pos = end
	if nl {
		l.pos++
	}
	l.scan = l.pos
	l.num = l.next
	l.next++
	if end-l.start > l.max {
		l.end, l.long = l.start+l.max, true
	}
	return true
}

// takeLong reports a line over the limit whose end is not buffered yet:
// its first max bytes are the line, the rest is discarded by the next call.
func (l *LineReader) takeLong() bool {
	l.start, l.end, l.hadNL = l.pos, l.pos+l.max, false
	l.pos, l.scan = len(l.data), len(l.data)
	l.num = l.next
	l.next++
	l.long, l.skip = true, true
	return true
}

// discard drops input through the next '\n' (the rest of a long line).
func (l *LineReader) discard() bool {
	for {
		if nl := bytes.IndexByte(l.data[l.pos:], '\n'); nl >= 0 {
			l.pos += nl + 1
			l.scan, l.skip = l.pos, false
			return true
		}
		l.pos, l.scan = len(l.data), len(l.data)
		if l.eof {
			l.skip = false
			return true
		}
		if !l.fill(l.pos) {
			return false
		}
	}
}

// Extend joins the next physical line to the current one (the "\n" between
// them stays in Line) and reports whether there was one within the limit.
// On false the current line is unchanged.
func (l *LineReader) Extend() bool {
	if l.long || !l.hadNL {
		return false
	}
	from := l.end + 1
	for {
		if nl := bytes.IndexByte(l.data[from:], '\n'); nl >= 0 {
			return l.extendTo(from+nl, true)
		}
		from = len(l.data)
		if from-l.start > l.max {
			return false
		}
		if l.eof {
			if from == l.end+1 {
				return false
			}
			return l.extendTo(from, false)
		}
		keep := l.start
		if !l.fill(keep) {
			return false
		}
		from -= keep
	}
}

func (l *LineReader) extendTo(end int, nl bool) bool {
	if end-l.start > l.max {
		return false
	}
	l.end, l.hadNL = end, nl
	l.pos = end
	if nl {
		l.pos++
	}
	l.scan = l.pos
	l.next++
	return true
}

// Rewind undoes every Extend of the current line: it is its first physical
// line again and the reader resumes after it.
func (l *LineReader) Rewind() {
	if l.end == l.first {
		return
	}
	l.end, l.hadNL = l.first, true
	l.pos = l.first + 1
	l.scan = l.pos
	l.next = l.num + 1
}

// fill moves data[keep:] to the front of the buffer and reads more,
// growing the buffer up to the line limit. It returns false on a read
// error; io.EOF sets eof and returns true.
func (l *LineReader) fill(keep int) bool {
	if keep > 0 {
		n := copy(l.buf, l.data[keep:])
		l.data = l.buf[:n]
		l.pos -= keep
		l.start -= keep
		l.end -= keep
		l.first -= keep
		l.scan -= keep
	}
	if len(l.data) == len(l.buf) {
		l.grow()
	}
	for empty := 0; ; empty++ {
		n, err := l.r.Read(l.buf[len(l.data):])
		l.data = l.buf[:len(l.data)+n]
		switch {
		case err == io.EOF:
			l.eof = true
			return true
		case err != nil:
			l.err = err
			return false
		case n > 0:
			return true
		case empty >= maxEmptyReads:
			l.err = io.ErrNoProgress
			return false
		}
	}
}

// grow doubles the buffer, to at most a line's limit plus room for its
// "\r\n" (a line up to the limit must fit with its end).
func (l *LineReader) grow() {
	size := max(2*cap(l.buf), min(DefaultReadSize, l.max+2))
	if limit := l.max + 2; size > limit && cap(l.buf) < limit {
		size = limit
	}
	nb := make([]byte, size)
	copy(nb, l.data)
	l.buf, l.data = nb, nb[:len(l.data)]
}

// Line returns the current line without its "\n" and one trailing "\r".
// For a line over the limit it is the line's first max bytes.
func (l *LineReader) Line() []byte {
	line := l.data[l.start:l.end]
	if n := len(line); n > 0 && line[n-1] == '\r' && !l.long {
		line = line[:n-1]
	}
	return line
}

// Num returns the current line's number, counting from 1 (its first
// physical line when it was extended).
func (l *LineReader) Num() int { return l.num }

// TooLong reports whether the current line was over the limit.
func (l *LineReader) TooLong() bool { return l.long }

// Err returns the read error that stopped the reader, if any.
func (l *LineReader) Err() error { return l.err }
