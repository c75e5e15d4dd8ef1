package answer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/admit"
)

// ChunkSize is how many bytes of an answer are made at a time: an answer
// within it is sent whole, a longer one in parts of about this size.
const ChunkSize = 64 << 10

// Source makes an answer's body in parts.
type Source interface {
	// Next appends the body's next bytes to dst, at least up to max bytes
	// unless the body ends first (done), and returns dst.
	Next(ctx context.Context, dst []byte, max int) (out []byte, done bool, err error)
	// Close releases the source. Write calls it once, whatever happens.
	Close()
}

// Options say how one answer is written.
type Options struct {
	// Context bounds the Source's work and the waits for a slot (the
	// server's work context, not the request's). Required.
	Context context.Context
	// Limiter is where the caller took the answer's slot; nil means the
	// caller took none.
	Limiter *admit.Limiter
	// ContentType is the answer's Content-Type.
	ContentType string
	// Gzip compresses the answer when the client accepts gzip: a whole
	// answer of at least MinGzip bytes, and any streamed answer.
	Gzip    bool
	MinGzip int
	// JSONP, when not empty, is a callback the streamed body is wrapped in:
	// cb(<body>), uncompressed. (A whole answer is left to the caller.)
	JSONP []byte
	// Cut appends what ends a streamed answer cut short by err (the
	// protocol's error, for the reader); nil appends nothing.
	Cut func(dst []byte, err error) []byte
	// Failed is told of a streamed answer cut short by err from its
	// Source or a lost slot, to count and log it; nil ignores it. A client
	// that stops reading is the write deadline's business, not this.
	Failed func(err error)
	// Ended is told once that the answer is over: err is nil when the
	// whole body was set as the response (whole) or reached the
	// connection (streamed), else why not: the first part's failure, a
	// cut, a failed write, or a response fasthttp dropped unwritten (a
	// HEAD). It runs on the handler's goroutine for a whole answer and on
	// the connection's once a streamed one is done; nil ignores it.
	Ended func(err error, streamed bool)
}

// errNotSent ends a streamed answer released before its last part was
// written.
var errNotSent = errors.New("answer released before it was written in full")

// Write makes the first part of src and answers the request with it:
// whole when src ends within ChunkSize bytes, else streamed (chunked, or
// to an HTTP/1.0 client delimited by the connection's close). It owns src
// and the caller's slot from now on. When the first part fails it closes
// src, gives the slot back and returns the error, with the response
// untouched, for the caller to answer in its protocol's error form.
func Write(ctx *fasthttp.RequestCtx, src Source, o Options) error {
	bp := getBuf()
	part, done, err := src.Next(o.Context, (*bp)[:0], ChunkSize)
	*bp = part
	if o.Limiter != nil {
		o.Limiter.Release()
	}
	if err != nil || done {
		src.Close()
		if err == nil {
			writeWhole(ctx, part, &o)
		}
		putBuf(bp)
		if o.Ended != nil {
			o.Ended(err, false)
		}
		return err
	}
	b := &body{src: src, o: o, part: bp, first: true}
	b.o.JSONP = bytes.Clone(o.JSONP)
	b.gzip = o.Gzip && len(o.JSONP) == 0 && ctx.Request.Header.HasAcceptEncoding("gzip")
	if len(b.o.JSONP) > 0 {
		wrapped := append(append(make([]byte, 0, len(b.o.JSONP)+1+len(part)), b.o.JSONP...), '(')
		*bp = append(wrapped, part...)
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(o.ContentType)
	if b.gzip {
		MarkGzip(&ctx.Response.Header)
	}
	if !ctx.Request.Header.IsHTTP11() && !ctx.IsHead() { // fasthttp skips a HEAD's body
		streamHTTP10(ctx, b)
		return nil
	}
	ctx.Response.SetBodyStream(b, -1)
	return nil
}

// streamHTTP10 streams b to an HTTP/1.0 client, which knows no chunked
// encoding: on the connection fasthttp hands over once the handler
// returns (and closes when this is done), the head says Connection:
// close and no length, and the parts follow as they are made; the close
// ends the body. A cut answer ends with Options.Cut's text, the only sign
// such a client gets.
func streamHTTP10(ctx *fasthttp.RequestCtx, b *body) {
	ctx.Response.Header.SetContentLength(-2) // close-delimited
	head := ctx.Response.Header.AppendBytes(nil)
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		defer b.Close()
		if _, err := c.Write(head); err == nil {
			b.WriteTo(c) // a failed write or a cut: the close ends the answer
		}
	})
}

// writeWhole sets a complete answer as the response body, gzipped as the
// options and the client allow.
func writeWhole(ctx *fasthttp.RequestCtx, body []byte, o *Options) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(o.ContentType)
	if o.Gzip && len(body) >= o.MinGzip && ctx.Request.Header.HasAcceptEncoding("gzip") {
		SetGzipped(&ctx.Response, body)
		return
	}
	ctx.SetBody(body) // copies
}

// SetGzipped sets resp's body to body gzipped, through a pooled buffer,
// and marks it (MarkGzip). body may be resp's own body.
func SetGzipped(resp *fasthttp.Response, body []byte) {
	zp := getBuf()
	*zp = AppendGzip((*zp)[:0], body)
	resp.SetBody(*zp) // copies
	MarkGzip(&resp.Header)
	putBuf(zp)
}

// body is a streamed answer: fasthttp's body stream, written on the
// connection's goroutine through WriteTo (Read serves any other reader).
type body struct {
	src   Source
	o     Options
	gzip  bool
	part  *[]byte // the part being written, pooled
	first bool    // part holds the first part, made by Write
	done  bool    // the last part is made
	cut   error   // the Source failed: the answer ends cut short
	werr  error   // writing to the connection failed
	zw    *gzip.Writer
	out   outBuf // the bytes for the wire: part, or its compressed form
	rd    int    // what Read has handed out of out
}

// outBuf collects the compressor's output.
type outBuf struct{ b []byte }

func (w *outBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// SupportsBodyWriteTo tells fasthttp to use WriteTo.
func (b *body) SupportsBodyWriteTo() bool { return true }

// WriteTo writes the answer's parts to w (fasthttp's chunk writer, one
// chunk and a flush per Write), making each only once the last is
// written. An error is a failed write or a cut answer: fasthttp then ends
// the response without its last chunk and closes the connection.
func (b *body) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		more, err := b.fill()
		if len(b.out.b) > 0 {
			k, werr := w.Write(b.out.b)
			n += int64(k)
			if werr != nil {
				b.werr = werr
				return n, werr
			}
			b.rd = len(b.out.b) // handed out, as Read counts it
		}
		switch {
		case err != nil:
			return n, err
		case !more:
			return n, b.cut
		}
	}
}

// Read implements io.Reader for readers other than fasthttp's chunk
// writer.
func (b *body) Read(p []byte) (int, error) {
	for b.rd == len(b.out.b) {
		if b.done && b.zw == nil {
			if b.cut != nil {
				return 0, b.cut
			}
			return 0, io.EOF
		}
		if _, err := b.fill(); err != nil {
			return 0, err
		}
	}
	k := copy(p, b.out.b[b.rd:])
	b.rd += k
	return k, nil
}

// fill makes the next part into b.out; more is false once the last bytes
// are in b.out.
func (b *body) fill() (more bool, err error) {
	b.out.b, b.rd = b.out.b[:0], 0
	if b.done {
		return false, nil
	}
	if !b.first {
		if err := b.next(); err != nil {
			return false, err
		}
	}
	b.first = false
	part := *b.part
	if b.done && b.cut == nil && len(b.o.JSONP) > 0 {
		part = append(part, ')')
		*b.part = part
	}
	if !b.gzip {
		b.out.b = append(b.out.b, part...)
		return !b.done, nil
	}
	return !b.done, b.compress(part)
}

// next makes the next part under a slot; a failure of the Source or of
// the wait becomes the part's cut text and ends the answer.
func (b *body) next() error {
	ctx := b.o.Context
	var err error
	if b.o.Limiter != nil {
		if err = b.o.Limiter.Resume(ctx); err != nil {
			err = errors.Join(errors.New("waiting for a query slot"), err)
		}
	}
	part := (*b.part)[:0]
	if err == nil {
		part, b.done, err = b.src.Next(ctx, part, ChunkSize)
		if b.o.Limiter != nil {
			b.o.Limiter.Release()
		}
	}
	if err != nil {
		b.done, b.cut = true, err
		if b.o.Cut != nil {
			part = b.o.Cut(part, err)
		}
		if b.o.Failed != nil {
			b.o.Failed(err)
		}
	}
	*b.part = part
	return nil
}

// compress gzips part into b.out, closing the stream after the last.
func (b *body) compress(part []byte) error {
	if b.zw == nil {
		b.zw = getGzip(&b.out)
	}
	if _, err := b.zw.Write(part); err != nil {
		return err
	}
	if !b.done {
		return nil
	}
	var err error
	if b.cut != nil {
		err = b.zw.Flush() // what was made reaches the reader; the stream stays unended
	} else {
		err = b.zw.Close()
	}
	putGzip(b.zw)
	b.zw = nil
	return err
}

// Close releases the answer; fasthttp calls it once the response is
// written or has failed.
func (b *body) Close() error {
	if b.src == nil {
		return nil
	}
	b.src.Close()
	b.src = nil
	if b.o.Ended != nil {
		b.o.Ended(b.endErr(), true)
	}
	if b.zw != nil {
		putGzip(b.zw)
		b.zw = nil
	}
	putBuf(b.part)
	b.part, b.out.b = nil, nil
	return nil
}

// endErr is why a streamed answer did not reach the connection whole, or
// nil.
func (b *body) endErr() error {
	switch {
	case b.cut != nil:
		return b.cut
	case b.werr != nil:
		return b.werr
	case !b.done || b.zw != nil || b.rd < len(b.out.b):
		return errNotSent
	}
	return nil
}

// maxPooled is the largest buffer kept for reuse: a part overshoots
// ChunkSize by one element at most, and a buffer one huge element grew is
// left to the GC.
const maxPooled = 4 * ChunkSize

var bufs = sync.Pool{New: func() any {
	b := make([]byte, 0, ChunkSize+ChunkSize/4)
	return &b
}}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

func putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooled {
		*bp = (*bp)[:0]
		bufs.Put(bp)
	}
}

var gzips sync.Pool // *gzip.Writer at BestSpeed

// MinGzip is the smallest whole answer worth gzipping for a client that
// accepts gzip: below about one packet, compressing saves no packet and
// costs both ends the work (package api's doc, "Compression").
const MinGzip = 1400

// MarkGzip says in h that the body is gzipped and that the encoding
// depends on Accept-Encoding, in one Vary header with what is there.
func MarkGzip(h *fasthttp.ResponseHeader) {
	h.Set(fasthttp.HeaderContentEncoding, "gzip")
	switch v := h.Peek(fasthttp.HeaderVary); {
	case len(v) == 0:
		h.Set(fasthttp.HeaderVary, "Accept-Encoding")
	case !bytes.Contains(v, []byte("Accept-Encoding")):
		h.Set(fasthttp.HeaderVary, string(v)+", Accept-Encoding")
	}
}

// WantsGzip reports whether ctx's client takes gzip and a whole body of n
// bytes is worth it.
func WantsGzip(ctx *fasthttp.RequestCtx, n int) bool {
	return n >= MinGzip && ctx.Request.Header.HasAcceptEncoding("gzip")
}

// AppendGzip appends body gzipped at the fastest level to dst and returns
// dst, on the caller's goroutine. fasthttp's own gzip of a whole body
// hands the work to a pooled goroutine and waits for it (its stackless
// writer): two goroutine switches a request, each of which can wake a
// sleeping thread, which cost a cached answer's round trip about 0.1 ms
// on a 2-core VM (package api's doc, "Compression").
func AppendGzip(dst, body []byte) []byte {
	g, _ := gzAppenders.Get().(*gzAppender)
	if g == nil {
		g = &gzAppender{}
		g.zw = getGzip(&g.a)
	}
	g.a.b = dst
	g.zw.Reset(&g.a)
	g.zw.Write(body) // an appender never fails
	g.zw.Close()
	out := g.a.b
	g.a.b = nil
	gzAppenders.Put(g)
	return out
}

// gzAppender is a gzip writer kept with the appender it writes to, so
// AppendGzip allocates nothing once warm.
type gzAppender struct {
	zw *gzip.Writer
	a  appender
}

var gzAppenders sync.Pool // *gzAppender

// appender is an io.Writer appending to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func getGzip(w io.Writer) *gzip.Writer {
	if zw, ok := gzips.Get().(*gzip.Writer); ok {
		zw.Reset(w)
		return zw
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level: no error
	return zw
}

func putGzip(zw *gzip.Writer) {
	zw.Reset(io.Discard)
	gzips.Put(zw)
}

// List is a Source of a JSON answer held in memory around a list: Open,
// then N elements appended by Elem with commas between, then End. Elem
// writes one element whole, so a part overshoots its size by at most one
// element. OnClose, when set, runs at Close (to release the result).
type List struct {
	Open, End []byte
	N         int
	Elem      func(dst []byte, i int) []byte
	OnClose   func()
	i         int  // the next element
	opened    bool // Open is written
}

// Next implements Source.
func (l *List) Next(_ context.Context, dst []byte, max int) ([]byte, bool, error) {
	if !l.opened {
		dst, l.opened = append(dst, l.Open...), true
	}
	for ; l.i < l.N && len(dst) < max; l.i++ {
		if l.i > 0 {
			dst = append(dst, ',')
		}
		dst = l.Elem(dst, l.i)
	}
	if l.i < l.N {
		return dst, false, nil
	}
	return append(dst, l.End...), true, nil
}

// Close implements Source.
func (l *List) Close() {
	if l.OnClose != nil {
		l.OnClose()
		l.OnClose = nil
	}
}
