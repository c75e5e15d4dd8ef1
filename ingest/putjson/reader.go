package putjson

import (
	"errors"
	"io"
)

// Reader mode (ResetReader) decodes a body as it is read. d.body is then a
// window over the stream: bytes before the current element are dropped
// (moved out) only between elements, when nothing yielded refers to them,
// and reads append after the last byte, so the slices of the element being
// parsed stay valid. The element parser is the one of Reset: it runs on
// what the window holds and, when it stopped at (or, for a look-ahead,
// near) the window's end before the stream's end, it runs again on a
// window holding at least twice as much of the element (so a long element
// costs at most about twice its parse). Every decision the parser takes
// more than lookAhead bytes before the window's end is the one it takes on
// the whole body, so both modes yield the same points and errors, offsets
// counted from the body's start; only an element longer than
// MaxElementBytes is refused (TooLargeError), where Reset has no limit.
// The window never exceeds MaxElementBytes+WindowSlack bytes.

// WindowSlack is how much a reader mode window may hold beyond
// MaxElementBytes: read-ahead.
const WindowSlack = 2 * minRead

const (
	// minRead is the least free room a read gets.
	minRead = 4 << 10
	// firstWindow is a new window's size.
	firstWindow = 64 << 10
	// lookAhead bounds how far past the failing byte the parser looks
	// (a surrogate pair's second \u escape), so a syntax error found
	// further than this from the window's end does not depend on what
	// follows.
	lookAhead = 16
)

// reader is a Decoder's reader mode state.
type reader struct {
	r    io.Reader // nil outside reader mode
	win  []byte    // the window's buffer, reused across bodies
	base int       // body offset of d.body[0]
	eof  bool      // r has no more bytes (end or error)
	err  error     // r's error other than io.EOF
	tail []byte    // scratch for reading past the last value
	// inElem is set while an element is parsed in reader mode: a syntax
	// error near the window's end is then errCut.
	inElem bool
}

func (rd *reader) reset(r io.Reader) {
	rd.r, rd.base, rd.eof, rd.err, rd.inElem = r, 0, false, nil, false
}

// peekMore is peek, reading more of the stream while the window holds
// only spaces. It may drop the bytes before d.pos.
func (d *Decoder) peekMore() byte {
	for {
		if c := d.peek(); d.pos < len(d.body) || d.rd.r == nil || !d.fill() {
			return c
		}
	}
}

// fill reads more of the stream into the window, dropping the bytes
// before d.pos or growing it when the room left is short; false when the
// stream has ended (d.rd.err tells a read error).
func (d *Decoder) fill() bool {
	rd := &d.rd
	if rd.eof {
		return false
	}
	if cap(d.body)-len(d.body) < minRead {
		d.compact()
		if cap(d.body)-len(d.body) < minRead {
			d.grow()
		}
	}
	for range 100 {
		n, err := rd.r.Read(d.body[len(d.body):cap(d.body)])
		d.body = d.body[:len(d.body)+n]
		if err != nil {
			rd.eof = true
			if err != io.EOF {
				rd.err = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	rd.eof, rd.err = true, io.ErrNoProgress
	return false
}

// compact moves the window's bytes from d.pos to its start.
func (d *Decoder) compact() {
	if d.pos == 0 {
		return
	}
	n := copy(d.body, d.body[d.pos:])
	d.rd.base += d.pos
	d.body, d.pos = d.body[:n], 0
}

// grow doubles the window, keeping its bytes, up to what the longest
// element and a read need.
func (d *Decoder) grow() {
	c := max(min(max(2*cap(d.body), firstWindow), d.opts.MaxElementBytes+2*minRead), len(d.body)+minRead)
	nb := make([]byte, len(d.body), c)
	copy(nb, d.body)
	d.body, d.rd.win = nb, nb[:0]
}

// cut reports that the element parse that ended at d.pos (ok or failed)
// may have depended on bytes past the window, which the stream still has.
func (d *Decoder) cut(ok bool) bool {
	if d.rd.eof {
		return false
	}
	if ok {
		return d.pos >= len(d.body) // a bare number may go on
	}
	return d.err == errCut
}

// errCut is the placeholder error of a parse that failed near the
// window's end: it never leaves the Decoder.
var errCut = errors.New("putjson: element cut by the window's end")

// refill reads until the window holds twice as much of the element at
// start as it did (or the stream ends) and returns the element's new
// start; false with d.err set when the element is over the limit.
func (d *Decoder) refill(start int) (int, bool) {
	n := len(d.body) - start
	if n > d.opts.MaxElementBytes {
		return start, d.tooLarge(start)
	}
	want := min(max(2*n, minRead), d.opts.MaxElementBytes+1)
	d.pos = start
	for len(d.body)-d.pos < want && d.fill() {
	}
	return d.pos, true
}

// tooLarge stops the Decoder on the element at start.
func (d *Decoder) tooLarge(start int) bool {
	d.err = &TooLargeError{Index: d.n, Offset: d.rd.base + start, Limit: d.opts.MaxElementBytes}
	d.done = true
	return false
}

// trailing checks that the rest of the stream is spaces, without touching
// the window (the current point refers to it).
func (d *Decoder) trailing() {
	rd := &d.rd
	if rd.tail == nil {
		rd.tail = make([]byte, minRead)
	}
	off := rd.base + len(d.body)
	if rd.err != nil {
		d.err = rd.err
	}
	for empty := 0; !rd.eof; {
		n, err := rd.r.Read(rd.tail)
		if empty++; n > 0 {
			empty = 0
		} else if err == nil && empty == 100 {
			err = io.ErrNoProgress
		}
		for i, c := range rd.tail[:n] {
			if !isSpace(c) {
				d.err = &SyntaxError{Offset: off + i, Msg: "unexpected data after the JSON value"}
				return
			}
		}
		off += n
		if err != nil {
			rd.eof = true
			if err != io.EOF {
				rd.err, d.err = err, err
			}
		}
	}
}
