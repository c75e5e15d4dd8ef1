package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/query/export"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
)

// throttleWait is how long an import waits before sending a batch again
// that the target throttled (when it gave no Retry-After).
var throttleWait = time.Second

// pointBatch keeps a batch's points with their own copies of the names,
// so that a throttled batch can be written again: the names in one arena,
// and per point its metric's length, its tag count and each key's and
// value's length.
type pointBatch struct {
	arena []byte
	lens  []int
	vals  []series.Point
}

func (b *pointBatch) reset() {
	b.arena, b.lens, b.vals = b.arena[:0], b.lens[:0], b.vals[:0]
}

// len returns the number of points.
func (b *pointBatch) len() int { return len(b.vals) }

// add copies p into the batch.
func (b *pointBatch) add(p *parse.Point) {
	b.arena = append(b.arena, p.Metric...)
	b.lens = append(b.lens, len(p.Metric), len(p.Tags))
	for _, t := range p.Tags {
		b.arena = append(b.arena, t.Key...)
		b.arena = append(b.arena, t.Value...)
		b.lens = append(b.lens, len(t.Key), len(t.Value))
	}
	b.vals = append(b.vals, p.Value)
}

// each calls fn with every point in order; dst is reused, its names alias
// the arena.
func (b *pointBatch) each(dst *parse.Point, fn func(*parse.Point) error) error {
	pos, l := 0, 0
	take := func(n int) []byte {
		s := b.arena[pos : pos+n : pos+n]
		pos += n
		return s
	}
	for _, v := range b.vals {
		dst.Metric = take(b.lens[l])
		nt := b.lens[l+1]
		l += 2
		dst.Tags = dst.Tags[:0]
		for range nt {
			k := take(b.lens[l])
			dst.Tags = append(dst.Tags, parse.Tag{Key: k, Value: take(b.lens[l+1])})
			l += 2
		}
		dst.Value = v
		if err := fn(dst); err != nil {
			return err
		}
	}
	return nil
}

// storeSink writes into a stopped store through the daemon's write path.
type storeSink struct {
	st    *ingestStack
	db    storage.DB
	sess  *service.Session
	batch pointBatch
	pt    parse.Point
	log   *slog.Logger
}

// openStoreSink opens the store as the daemon does (its lock refuses a
// second opener) and its write path: UIDs, index, head and log, flusher.
func openStoreSink(ctx context.Context, c *config, log *slog.Logger) (_ *storeSink, err error) {
	// A new directory becomes a new store, as the daemon makes one.
	db, err := c.openStore(ctx, log, nil)
	if err != nil && c.engine != "bigtable" && isLockError(err) {
		return nil, fmt.Errorf("the store in %s is locked by a running tsd: stop the daemon first, or import with --url (%w)", c.dataDir, err)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := c.prepareStore(ctx, db, log); err != nil {
		return nil, err
	}
	st, err := c.openIngest(ctx, db, log, nil, func() {})
	if err != nil {
		return nil, err
	}
	if st.writer == nil {
		st.close(ctx, log)
		return nil, errors.New("the store is read-only (tsd.mode=ro): nothing can be imported")
	}
	return &storeSink{st: st, db: db, sess: st.writer.Session(service.Telnet), log: log}, nil
}

func (s *storeSink) add(p *parse.Point, _ []byte) error {
	s.batch.add(p)
	return nil
}

// flush appends the batch to the head and commits it to the log; a
// throttled batch (head memory, a full disk) is rolled back and written
// again once the flusher has made room.
func (s *storeSink) flush(ctx context.Context, from, to int, refused refusedFunc) error {
	defer s.batch.reset()
	for {
		bad, first, err := s.write(ctx)
		if err == nil {
			if bad > 0 {
				refused(from, to, bad, first)
			}
			return nil
		}
		if !errors.Is(err, service.ErrThrottled) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(throttleWait / 5):
		}
	}
}

// write adds and commits the batch once.
func (s *storeSink) write(ctx context.Context) (bad int, first string, err error) {
	err = s.batch.each(&s.pt, func(p *parse.Point) error {
		err := s.sess.Add(ctx, p)
		var pe *service.PointError
		if errors.As(err, &pe) {
			if bad++; first == "" {
				first = err.Error()
			}
			return nil
		}
		return err
	})
	if err != nil {
		s.sess.Rollback()
		return 0, "", err
	}
	return bad, first, s.sess.Commit(false)
}

// wait has nothing to wait for: flush wrote the batch.
func (s *storeSink) wait(context.Context, refusedFunc) error { return nil }

// close flushes every point to the store and closes it.
func (s *storeSink) close(ctx context.Context) error {
	s.sess.Release()
	err := s.st.close(ctx, s.log)
	return errors.Join(err, s.db.Close())
}

// pipeline keeps a daemon sink's one batch in flight: the goroutine that
// sends it is started by start and always joined by wait (close waits
// too), so none outlives the sink.
type pipeline struct {
	done chan batchResult // nil when nothing is in flight
}

// batchResult is a sent batch's outcome.
type batchResult struct {
	from, to, bad int
	why           string
	err           error
}

// start sends a batch of lines from..to with send on a goroutine of its own.
func (p *pipeline) start(from, to int, send func() (bad int, why string, err error)) {
	ch := make(chan batchResult, 1)
	p.done = ch
	go func() {
		bad, why, err := send()
		ch <- batchResult{from: from, to: to, bad: bad, why: why, err: err}
	}()
}

// wait joins the batch in flight, if any, and reports it.
func (p *pipeline) wait(refused refusedFunc) error {
	if p.done == nil {
		return nil
	}
	r := <-p.done
	p.done = nil
	if r.bad > 0 && refused != nil {
		refused(r.from, r.to, r.bad, r.why)
	}
	return r.err
}

// httpSink posts batches to /api/put.
type httpSink struct {
	url, user, password, token string
	body, spare                []byte // the batch being added to, the one in flight
	n                          int
	client                     *http.Client
	inflight                   pipeline
}

func newHTTPSink(url, user, password, token string) *httpSink {
	return &httpSink{url: url, user: user, password: password, token: token,
		client: &http.Client{Timeout: 10 * time.Minute}}
}

// add appends the point's JSON object to the batch's array.
func (s *httpSink) add(p *parse.Point, _ []byte) error {
	if s.n == 0 {
		s.body = append(s.body[:0], '[')
	} else {
		s.body = append(s.body, ',')
	}
	s.n++
	b := append(s.body, `{"metric":`...)
	b = jsonw.JSON.AppendBytes(b, p.Metric)
	b = append(b, `,"timestamp":`...)
	b = export.AppendTimestamp(b, p.Value)
	b = append(b, `,"value":`...)
	b = export.AppendNumber(b, p.Value)
	b = append(b, `,"tags":{`...)
	for i, t := range p.Tags {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.JSON.AppendBytes(b, t.Key)
		b = append(b, ':')
		b = jsonw.JSON.AppendBytes(b, t.Value)
	}
	s.body = append(b, "}}"...)
	return nil
}

// putAnswer is /api/put?details' answer.
type putAnswer struct {
	Success int `json:"success"`
	Failed  int `json:"failed"`
	Errors  []struct {
		Error string `json:"error"`
	} `json:"errors"`
}

// flush joins the batch in flight, then posts this one in the background
// until it is not throttled.
func (s *httpSink) flush(ctx context.Context, from, to int, refused refusedFunc) error {
	if s.n == 0 {
		return nil
	}
	err := s.inflight.wait(refused)
	body := append(s.body, ']')
	s.body, s.spare, s.n = s.spare[:0], body, 0
	s.inflight.start(from, to, func() (int, string, error) {
		for {
			wait, bad, why, err := s.post(ctx, body)
			if err != nil || wait == 0 {
				return bad, why, err
			}
			select {
			case <-ctx.Done():
				return 0, "", ctx.Err()
			case <-time.After(wait):
			}
		}
	})
	return err
}

func (s *httpSink) wait(_ context.Context, refused refusedFunc) error {
	return s.inflight.wait(refused)
}

// post sends a batch once; a positive wait asks for another try, bad
// counts the points the daemon refused.
func (s *httpSink) post(ctx context.Context, body []byte) (wait time.Duration, bad int, why string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/api/put?details", bytes.NewReader(body))
	if err != nil {
		return 0, 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	switch {
	case s.token != "":
		req.Header.Set("Authorization", "Bearer "+s.token)
	case s.user != "":
		req.SetBasicAuth(s.user, s.password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, "", err
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNoContent:
		return 0, 0, "", nil
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return retryAfter(resp.Header.Get("Retry-After")), 0, "", nil
	case http.StatusBadRequest:
		var a putAnswer
		if json.Unmarshal(ans, &a) == nil && a.Failed > 0 {
			if len(a.Errors) > 0 {
				why = a.Errors[0].Error
			}
			return 0, a.Failed, why, nil
		}
	}
	return 0, 0, "", fmt.Errorf("POST %s/api/put: %s: %s", s.url, resp.Status, bytes.TrimSpace(ans))
}

// retryAfter reads a Retry-After header in seconds (throttleWait when
// absent or not a number).
func retryAfter(h string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 {
		return max(time.Duration(n)*time.Second, 100*time.Millisecond)
	}
	return throttleWait
}

func (s *httpSink) close(context.Context) error { return s.inflight.wait(nil) }

// telnetSink sends put lines over one telnet connection, each batch
// followed by a version command: its answer comes once the batch's
// points are on disk, and every error reply of the batch came before it.
type telnetSink struct {
	conn       net.Conn
	r          *bufio.Reader
	buf, spare []byte // the batch being added to, the one in flight
	n          int
	addr       string
	inflight   pipeline
}

// dialTelnetSink connects and, with credentials, authenticates.
func dialTelnetSink(ctx context.Context, addr, user, password string) (*telnetSink, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &telnetSink{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), addr: addr}
	if user != "" {
		if _, err := fmt.Fprintf(conn, "auth basic %s %s\n", user, password); err != nil {
			conn.Close()
			return nil, err
		}
		line, err := s.readLine()
		if err != nil || !strings.HasPrefix(line, "AUTH_SUCCESS") {
			conn.Close()
			return nil, fmt.Errorf("telnet %s: auth refused (%q, %v)", addr, line, err)
		}
	}
	return s, nil
}

// add appends the point's put line: the line as read when it has no
// escape (the daemon parses it with the same parser), else formatted
// again; a name with a space or '=' has no telnet form.
func (s *telnetSink) add(p *parse.Point, text []byte) error {
	if s.n == 0 {
		s.buf = s.buf[:0]
	}
	if bytes.IndexByte(text, '\\') < 0 {
		s.n++
		s.buf = append(append(append(s.buf, "put "...), text...), '\n')
		return nil
	}
	if hasSpaceOrEqual(p.Metric) {
		return errNoTelnetForm
	}
	for _, t := range p.Tags {
		if hasSpaceOrEqual(t.Key) || hasSpaceOrEqual(t.Value) {
			return errNoTelnetForm
		}
	}
	s.n++
	b := append(s.buf, "put "...)
	b = append(b, p.Metric...)
	b = append(b, ' ')
	b = export.AppendTimestamp(b, p.Value)
	b = append(b, ' ')
	b = export.AppendNumber(b, p.Value)
	for _, t := range p.Tags {
		b = append(b, ' ')
		b = append(b, t.Key...)
		b = append(b, '=')
		b = append(b, t.Value...)
	}
	s.buf = append(b, '\n')
	return nil
}

var errNoTelnetForm = errors.New("a name holding a space or '=' cannot be sent over telnet (use --url http://...)")

func hasSpaceOrEqual(b []byte) bool {
	for _, c := range b {
		if c == ' ' || c == '=' {
			return true
		}
	}
	return false
}

// flush joins the batch in flight, then sends this one and its barrier in
// the background, reading the replies up to the version answer; a
// throttled batch is sent again.
func (s *telnetSink) flush(ctx context.Context, from, to int, refused refusedFunc) error {
	if s.n == 0 {
		return nil
	}
	err := s.inflight.wait(refused)
	buf := s.buf
	s.buf, s.spare, s.n = s.spare[:0], buf, 0
	s.inflight.start(from, to, func() (int, string, error) {
		for {
			throttled, bad, why, err := s.send(buf)
			if err != nil || !throttled {
				return bad, why, err
			}
			select {
			case <-ctx.Done():
				return 0, "", ctx.Err()
			case <-time.After(throttleWait):
			}
		}
	})
	return err
}

func (s *telnetSink) wait(_ context.Context, refused refusedFunc) error {
	return s.inflight.wait(refused)
}

// send writes the lines and the barrier once and reads the replies.
func (s *telnetSink) send(lines []byte) (throttled bool, bad int, first string, err error) {
	s.conn.SetDeadline(time.Now().Add(10 * time.Minute)) // liveness only
	if _, err := s.conn.Write(append(lines, "version\n"...)); err != nil {
		return false, 0, "", fmt.Errorf("telnet %s: %w", s.addr, err)
	}
	for {
		line, err := s.readLine()
		if err != nil {
			return false, 0, "", fmt.Errorf("telnet %s: waiting for the version barrier: %w", s.addr, err)
		}
		switch {
		case strings.HasPrefix(line, "Built on "):
			if throttled {
				return true, 0, "", nil
			}
			return false, bad, first, nil
		case strings.HasPrefix(line, "put: Please throttle writes"):
			throttled = true
		case strings.HasPrefix(line, "put: "), strings.HasPrefix(line, "auth: "):
			if bad++; first == "" {
				first = line
			}
		}
	}
}

func (s *telnetSink) readLine() (string, error) {
	line, err := s.r.ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// close ends the connection, which also ends a batch still in flight
// (after an error or a signal), and joins it.
func (s *telnetSink) close(context.Context) error {
	if s.inflight.done == nil {
		s.conn.Write([]byte("exit\n"))
	}
	err := s.conn.Close()
	s.inflight.wait(nil)
	return err
}
