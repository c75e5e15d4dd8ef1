package service

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/rowkey/hist"
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
	// Auth turns access control on (telnet_auth.go): a connection must
	// authenticate, by an auth line or its client certificate, unless
	// Auth grants every connection a role, and each command needs its
	// access. Default nil: every command is served, as in OpenTSDB.
	Auth TelnetAuth
	// DropCaches is called by "dropcaches" besides the writer's caches
	// (the read side's). Default none.
	DropCaches func()
	// Stats appends the reply to "stats": the daemon's stats, each a line
	// "tsd.<name> <epoch s> <value>[ <tag>...] host=<host>\n" as OpenTSDB's
	// StatsCollector writes them, the same list /api/stats serves.
	// Default nil: the reply is the writer's own counts in that form.
	Stats func(dst []byte) []byte
	// RateLog receives a WARN line for each batch of put lines with
	// refused points (client, count, first error), within its budget
	// per client (kind ingest.refused.telnet). Default none.
	RateLog *ratelog.Logger
	// ObserveBatch is told how long each batch of put lines took, from
	// its first line to its commit. Default none.
	ObserveBatch func(time.Duration)
}

// TelnetHandler serves OpenTSDB's telnet protocol on raw connections
// (api.ConnHandler). Safe for concurrent use: each connection gets its own
// parser, buffers and Session.
type TelnetHandler struct {
	w     *Writer
	opts  TelnetOptions
	host  string
	conns sync.Pool // *telnetConn, so connect-per-flush clients reuse buffers
	// commands counts the lines run as commands, OpenTSDB's
	// rpc.received type=telnet: each connection counts its own and adds
	// them here before it answers or waits (telnetConn.publish).
	commands atomic.Int64
}

// Commands returns how many telnet lines were run as commands (puts
// included), on every connection so far.
func (h *TelnetHandler) Commands() int64 { return h.commands.Load() }

// NewTelnetHandler returns a handler writing through w. With w nil it
// is read-only, as OpenTSDB's tsd.mode=ro: put, rollup and histogram are
// unknown commands and help does not list them.
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
	buf    []byte         // reply scratch
	hist   hist.Histogram // the histogram line's buckets, reused
	// Under access control (TelnetOptions.Auth): the connection, who it
	// authenticated as, and its failed attempts.
	conn      net.Conn
	user      string
	access    Access
	authFails int
	// The batch of puts since the last commit: when its first line came,
	// the points refused and the first refusal's reply.
	batchStart time.Time
	refused    int
	firstErr   string
	// commands counts the lines run since the last publish: a counter
	// every connection adds to on every line moves its cache line
	// between cores on each add (about 250 ns an add here with two
	// writers, against 1 ns for one each).
	commands int64
}

// ServeConn reads lines from conn until it closes or the client exits.
// Puts are committed in batches: whenever the bytes already received are
// used up, before waiting for more, and before answering version.
func (h *TelnetHandler) ServeConn(conn net.Conn) {
	c := h.getConn(conn)
	defer h.putConn(c)
	defer c.publish()
	for c.serveLine() {
		if c.br.Buffered() == 0 || (c.sess != nil && c.sess.Pending() >= maxTelnetPending) {
			c.commit()
			c.publish() // counted before any reply to these lines is sent
			if c.bw.Flush() != nil {
				return
			}
		}
	}
	c.commit()
	c.bw.Flush()
}

// publish adds the lines c counted to the handler's count.
func (c *telnetConn) publish() {
	if c.commands != 0 {
		c.h.commands.Add(c.commands)
		c.commands = 0
	}
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
	if h.w != nil {
		c.sess = h.w.Session(Telnet)
	}
	c.conn, c.user, c.access, c.authFails = conn, "", AccessNone, 0
	if h.opts.Auth != nil {
		c.user, c.access = h.opts.Auth.Open(conn)
	}
	return c
}

func (h *TelnetHandler) putConn(c *telnetConn) {
	if c.sess != nil {
		c.sess.Release()
		c.sess = nil
	}
	c.br.Reset(nil)
	c.bw.Reset(nil)
	c.conn = nil
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
			c.h.countTooLarge()
			c.reply("error: line too long: over " + strconv.Itoa(c.h.opts.MaxLineBytes) + " bytes")
		} else if !c.command(line) {
			return false
		}
	}
	return err == nil
}

// skipLong answers a line over the limit and discards the rest of it.
func (c *telnetConn) skipLong() {
	c.h.countTooLarge()
	c.reply("error: line too long: over " + strconv.Itoa(c.h.opts.MaxLineBytes) + " bytes")
	for {
		_, err := c.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (h *TelnetHandler) countTooLarge() {
	if h.w != nil {
		h.w.stats[Telnet].TooLarge.Add(1)
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
	c.commands++
	cmd, name := telnet.SplitCommand(line)
	if c.h.w == nil && (cmd == telnet.Put || cmd == telnet.Rollup || cmd == telnet.Histogram) {
		cmd = telnet.Unknown // not registered in a read-only daemon
	}
	if c.h.opts.Auth != nil {
		if run, keep := c.gate(cmd, name, line); !run {
			return keep
		}
	}
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
		if c.h.w != nil {
			c.h.w.DropCaches()
		}
		if c.h.opts.DropCaches != nil {
			c.h.opts.DropCaches()
		}
		c.reply("Caches dropped.")
	case telnet.Exit:
		return false
	case telnet.DieDieDie:
		return c.dieDieDie()
	case telnet.Rollup:
		c.rollup(line)
	case telnet.Histogram:
		c.histogram(line)
	default:
		c.reply(telnet.UnknownCommand(name))
	}
	return true
}

// help is OpenTSDB's RpcManager.Help reply, without its "\n": the
// commands in the order initializeBuiltinRpcs registers them, each followed
// by a space, diediedie only when it is enabled. Only commands tsd serves
// are listed. rollup is listed with rollups off too: OpenTSDB 2.4
// registers it in every writing mode whatever its rollup configuration,
// and tsd serves it as OpenTSDB does then, answering "No rollup or
// aggregations were configured".
func (h *TelnetHandler) help() string {
	cmds := "available commands: stats dropcaches version exit help put rollup histogram "
	if h.w == nil {
		cmds = "available commands: stats dropcaches version exit help "
	}
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
	if c.batchStart.IsZero() && c.h.opts.ObserveBatch != nil {
		c.batchStart = time.Now()
	}
	if err := c.parser.ParsePut(line, &c.pt); err != nil {
		c.sess.CountBadErr(err)
		c.refuse(err.Error())
		return
	}
	ok, err := c.sess.AddKnown(&c.pt) // a series this session appended before
	if !ok {
		err = c.sess.AddOwned(context.Background(), &c.pt) // c.pt is parsed anew per line
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrThrottled):
		c.refuse("put: Please throttle writes: " + ThrottleReason(err))
	case errors.Is(err, uid.ErrNoSuchName):
		c.refuse("put: unknown metric: " + err.Error())
	default:
		c.refuse("put: illegal argument: " + err.Error())
	}
}

// refuse answers a refused put line and counts it for the batch's log
// line.
func (c *telnetConn) refuse(msg string) {
	if c.refused == 0 {
		c.firstErr = msg
	}
	c.refused++
	c.reply(msg)
}

// endBatch reports the batch of puts committed with n points failing to
// commit (err): its duration, and one WARN line for its refused points.
func (c *telnetConn) endBatch(n int, err error) {
	if !c.batchStart.IsZero() {
		c.h.opts.ObserveBatch(time.Since(c.batchStart))
		c.batchStart = time.Time{}
	}
	if err != nil {
		if c.refused == 0 {
			c.firstErr = "put: Please throttle writes: " + ThrottleReason(err)
		}
		c.refused += n
	}
	if c.refused > 0 && c.h.opts.RateLog != nil {
		c.h.opts.RateLog.Warn("ingest.refused.telnet", ratelog.Client(c.conn.RemoteAddr()), "points refused",
			"protocol", "telnet", "points", c.refused, "first_error", c.firstErr)
	}
	c.refused, c.firstErr = 0, ""
}

// rollup stores one rollup or pre-aggregate line at once (it does not
// wait for a commit), answering errors only, as OpenTSDB's
// RollupDataPointRpc does.
func (c *telnetConn) rollup(line []byte) {
	word, ts, err := c.parser.ParseRollup(line, &c.pt)
	if err != nil {
		c.sess.CountBadErr(err)
		c.reply(telnet.RollupCommandError(err))
		return
	}
	spec := ParseRollupSpec(word)
	spec.RawTimestamp = ts
	err = c.sess.AddRollup(context.Background(), &c.pt, &spec)
	var re *RollupError
	switch {
	case err == nil:
	case errors.Is(err, ErrThrottled):
		c.reply("rollup: Please throttle writes: " + ThrottleReason(err))
	case errors.As(err, &re) && re.NoSuchRollup:
		c.reply("rollup: No such rollup: " + re.Msg)
	case errors.Is(err, uid.ErrNoSuchName):
		c.reply("rollup: unknown metric: " + err.Error())
	default:
		c.reply("rollup: illegal argument: " + err.Error())
	}
}

// commit writes the pending puts to the log; a failure is answered once
// for them all.
func (c *telnetConn) commit() {
	if c.sess == nil {
		return
	}
	n := c.sess.Pending()
	err := c.sess.Commit(false)
	if err != nil {
		c.reply("put: Please throttle writes: " + ThrottleReason(err) + " (" + strconv.Itoa(n) + " points not written)")
	}
	c.endBatch(n, err)
}

// barrier commits the pending puts and waits until every put the
// connection committed is on stable storage, so that the version reply
// after it vouches for them (tcollector's heartbeat, and any client that
// treats the reply as an acknowledgement). A failure is answered before
// the version reply.
func (c *telnetConn) barrier() {
	if c.sess == nil {
		return
	}
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
	c.publish() // the lines before it on this connection, and itself
	if f := c.h.opts.Stats; f != nil {
		c.bw.Write(f(nil))
		return
	}
	if c.h.w == nil {
		return
	}
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
	c.reply("tsd.head.memory-bytes " + now + " " + strconv.FormatInt(c.h.w.head.MemoryBytes(), 10) + " host=" + c.h.host)
}
