package service

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxLineBytes is TelnetOptions.MaxLineBytes' default, 64 KiB.
const DefaultMaxLineBytes = 64 << 10

// TelnetOptions configure a TelnetHandler.
type TelnetOptions struct {
	// Parser configures put line parsing (max tags, special characters).
	Parser telnet.Options
	// MaxLineBytes bounds a line, without its "\n"; a longer line is
	// answered with an error and skipped. Default 64 KiB.
	MaxLineBytes int
	// Version is the reply to "version", its lines without the last "\n".
	// Default "tsd".
	Version string
	// NoDieDieDie refuses "diediedie" (tsd.no_diediedie). The zero value
	// allows it only when Shutdown is set; cmd/tsd sets it from the key
	// whose default is true.
	NoDieDieDie bool
	// Shutdown is called by an allowed "diediedie". Default none.
	Shutdown func()
}

// TelnetHandler serves OpenTSDB's telnet protocol on raw connections
// (api.ConnHandler). Safe for concurrent use: each connection gets its own
// parser, buffers and Session.
type TelnetHandler struct {
	w     *Writer
	opts  TelnetOptions
	host  string
	conns sync.Pool // *telnetConn, so connect-per-flush clients reuse buffers
}

// NewTelnetHandler returns a handler writing through w.
func NewTelnetHandler(w *Writer, opts TelnetOptions) (*TelnetHandler, error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Version == "" {
		opts.Version = "tsd"
	}
	if _, err := telnet.NewParser(&opts.Parser); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &TelnetHandler{w: w, opts: opts, host: host}, nil
}

// maxTelnetPending bounds the puts a connection holds before committing
// them: a client that streams without pause never lets the read buffer run
// empty, and its points must still reach the log (and be readable) in
// bounded time and memory.
const maxTelnetPending = 4096

// telnetConn is one connection's state.
type telnetConn struct {
	h      *TelnetHandler
	br     *bufio.Reader
	bw     *bufio.Writer
	parser *telnet.Parser
	sess   *Session
	pt     parse.Point
	buf    []byte // reply scratch
}

// ServeConn reads lines from conn until it closes or the client exits.
// Puts are committed in batches: whenever the bytes already received are
// used up, before waiting for more, and before answering version.
func (h *TelnetHandler) ServeConn(conn net.Conn) {
	c := h.getConn(conn)
	defer h.putConn(c)
	for c.serveLine() {
		if c.br.Buffered() == 0 || c.sess.Pending() >= maxTelnetPending {
			c.commit()
			if c.bw.Flush() != nil {
				return
			}
		}
	}
	c.commit()
	c.bw.Flush()
}

func (h *TelnetHandler) getConn(conn net.Conn) *telnetConn {
	c, ok := h.conns.Get().(*telnetConn)
	if !ok {
		parser, _ := telnet.NewParser(&h.opts.Parser)
		c = &telnetConn{h: h, parser: parser,
			br: bufio.NewReaderSize(conn, h.opts.MaxLineBytes+2), bw: bufio.NewWriterSize(conn, 4096)}
	}
	c.br.Reset(conn)
	c.bw.Reset(conn)
	c.sess = h.w.Session(Telnet)
	return c
}

func (h *TelnetHandler) putConn(c *telnetConn) {
	c.sess.Release()
	c.sess = nil
	c.br.Reset(nil)
	c.bw.Reset(nil)
	h.conns.Put(c)
}

// serveLine reads and answers one line; false ends the connection.
func (c *telnetConn) serveLine() bool {
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		c.skipLong()
		return true
	}
	if len(line) > 0 {
		if line = trimEOL(line); len(line) > c.h.opts.MaxLineBytes {
			c.h.w.stats[Telnet].TooLarge.Add(1)
			c.reply("error: line too long: over " + strconv.Itoa(c.h.opts.MaxLineBytes) + " bytes")
		} else if !c.command(line) {
			return false
		}
	}
	return err == nil
}

// skipLong answers a line over the limit and discards the rest of it.
func (c *telnetConn) skipLong() {
	c.h.w.stats[Telnet].TooLarge.Add(1)
	c.reply("error: line too long: over " + strconv.Itoa(c.h.opts.MaxLineBytes) + " bytes")
	for {
		_, err := c.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// command runs one line; false closes the connection.
// An empty line is OpenTSDB's command "" (its frame decoder passes empty
// lines on), so it gets the unknown-command reply.
func (c *telnetConn) command(line []byte) bool {
	cmd, name := telnet.SplitCommand(line)
	switch cmd {
	case telnet.Put:
		c.put(line)
	case telnet.Version:
		c.barrier()
		c.reply(c.h.opts.Version)
	case telnet.Stats:
		c.stats()
	case telnet.Help:
		c.reply(c.h.help())
	case telnet.DropCaches:
		c.h.w.DropCaches()
		c.reply("Caches dropped.")
	case telnet.Exit:
		return false
	case telnet.DieDieDie:
		return c.dieDieDie()
	case telnet.Rollup, telnet.Histogram:
		c.reply(cmd.String() + ": illegal argument: " + cmd.String() + " is not supported by tsd yet")
	default:
		c.reply(telnet.UnknownCommand(name))
	}
	return true
}

// help is OpenTSDB's RpcManager.Help reply, without its "\n": the
// commands in the order initializeBuiltinRpcs registers them, each followed
// by a space, diediedie only when it is enabled.
func (h *TelnetHandler) help() string {
	const cmds = "available commands: stats dropcaches version exit help put rollup histogram "
	if h.dieDieDieOff() {
		return cmds
	}
	return cmds + "diediedie "
}

func (h *TelnetHandler) dieDieDieOff() bool { return h.opts.NoDieDieDie || h.opts.Shutdown == nil }

func (c *telnetConn) dieDieDie() bool {
	if c.h.dieDieDieOff() {
		c.reply("diediedie: disabled (tsd.no_diediedie=true)")
		return true
	}
	c.commit()
	c.reply("Cleaning up and exiting now.")
	c.bw.Flush()
	go c.h.opts.Shutdown()
	return false
}

// put parses and appends one put line, answering errors only.
func (c *telnetConn) put(line []byte) {
	if err := c.parser.ParsePut(line, &c.pt); err != nil {
		c.sess.CountBad(1)
		c.reply(err.Error())
		return
	}
	err := c.sess.AddOwned(context.Background(), &c.pt) // c.pt is parsed anew per line
	switch {
	case err == nil:
	case errors.Is(err, ErrThrottled):
		c.reply("put: Please throttle writes: " + ThrottleReason(err))
	case errors.Is(err, uid.ErrNoSuchName):
		c.reply("put: unknown metric: " + err.Error())
	default:
		c.reply("put: illegal argument: " + err.Error())
	}
}

// commit writes the pending puts to the log; a failure is answered once
// for them all.
func (c *telnetConn) commit() {
	n := c.sess.Pending()
	if err := c.sess.Commit(false); err != nil {
		c.reply("put: Please throttle writes: " + ThrottleReason(err) + " (" + strconv.Itoa(n) + " points not written)")
	}
}

// barrier commits the pending puts and waits until every put the
// connection committed is on stable storage, so that the version reply
// after it vouches for them (tcollector's heartbeat, and any client that
// treats the reply as an acknowledgement). A failure is answered before
// the version reply.
func (c *telnetConn) barrier() {
	c.commit()
	if err := c.sess.Sync(); err != nil {
		c.reply("put: Please throttle writes: " + ThrottleReason(err) + " (earlier points may not be on disk)")
	}
}

func (c *telnetConn) reply(s string) {
	c.bw.WriteString(s)
	c.bw.WriteByte('\n')
}

// stats answers in OpenTSDB's ASCII collector form:
// "tsd.<name> <epoch s> <value>[ <tag>] host=<host>".
func (c *telnetConn) stats() {
	now := strconv.FormatInt(time.Now().Unix(), 10)
	for p := range numProtocols {
		st := c.h.w.Stats(p)
		// StatsCollector.record: the record's own tag, then the host tag.
		tags := " protocol=" + p.String() + " host=" + c.h.host
		c.reply("tsd.ingest.points " + now + " " + strconv.FormatInt(st.Points.Load(), 10) + tags)
		c.reply("tsd.ingest.bad " + now + " " + strconv.FormatInt(st.Bad.Load(), 10) + tags)
		c.reply("tsd.ingest.throttled " + now + " " + strconv.FormatInt(st.Throttled.Load(), 10) + tags)
	}
	c.reply("tsd.head.series " + now + " " + strconv.FormatInt(c.h.w.head.NumSeries(), 10) + " host=" + c.h.host)
	c.reply("tsd.head.memory " + now + " " + strconv.FormatInt(c.h.w.head.MemoryBytes(), 10) + " host=" + c.h.host)
}
