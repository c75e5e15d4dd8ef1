package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/procstat"
)

// Options configure Run. Zero fields take the documented defaults.
type Options struct {
	// Addr is the server's host:port. Default 127.0.0.1:4242.
	Addr string
	// Format is the protocol. Default gen.FormatTelnet.
	Format gen.Format
	// Path overrides the HTTP path (and query). Defaults: /api/put,
	// /write?precision=ns, /api/v1/write.
	Path string
	// Conns is the number of connections, each with its own sender
	// goroutine. Default 4.
	Conns int
	// NoBarrier streams telnet lines without the "version" barrier after
	// each batch (no latency figures then). Default false.
	NoBarrier bool
	// BarrierLines is how many lines the server answers to "version".
	// Default 2 (OpenTSDB's reply).
	BarrierLines int
	// Timeout bounds one request. Default 60 s.
	Timeout time.Duration
	// Preload encodes every body before the clock starts. Default false:
	// one producer goroutine encodes ahead of the senders.
	Preload bool
	// PID is the server's process id for /proc readings; 0 skips them.
	PID int
	// User and Password are sent as Basic credentials on every HTTP
	// request, and as "auth basic USER PASSWORD" first on every telnet
	// connection (tsd.auth.config). Default none.
	User, Password string
	// Token is sent as "Authorization: Bearer TOKEN" on HTTP and as
	// "auth token TOKEN" on telnet; User wins when both are set. Default
	// none.
	Token string
	// TLS, when set, sends over TLS with this client configuration
	// (https:// for the HTTP protocols). Default nil: plaintext.
	TLS *tls.Config
}

// EnsureDefaults fills zero fields.
func (o *Options) EnsureDefaults() {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:4242"
	}
	if o.Path == "" {
		o.Path = defaultPaths[o.Format]
	}
	if o.Conns <= 0 {
		o.Conns = 4
	}
	if o.BarrierLines <= 0 {
		o.BarrierLines = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
}

var defaultPaths = map[gen.Format]string{
	gen.FormatJSON:        "/api/put",
	gen.FormatInflux:      "/write?precision=ns",
	gen.FormatRemoteWrite: "/api/v1/write",
}

// Result is what a run measured.
type Result struct {
	// Points and Requests count what was sent and answered without error.
	Points, Requests int64
	// Errors counts failed requests (telnet: error lines); ErrorSamples
	// keeps the first few messages.
	Errors       int64
	ErrorSamples []string
	// Elapsed is the wall time from the first send to the last answer.
	Elapsed time.Duration
	// Latencies holds every successful request's latency, sorted.
	Latencies []time.Duration
	// Server is the server's cost over the run when a PID was given.
	Server *ServerCost
	// LoaderCPUSeconds is this process's CPU time over Elapsed: the
	// sending, and the encoding unless Options.Preload did it before.
	LoaderCPUSeconds float64
}

// ServerCost is the server's CPU time over the run and its memory peak.
type ServerCost struct {
	CPUSeconds float64
	PeakRSS    int64
}

// PointsPerSecond returns the sending rate.
func (r *Result) PointsPerSecond() float64 { return float64(r.Points) / r.Elapsed.Seconds() }

// Percentile returns the q-quantile (0..1) of the latencies, nearest rank.
func (r *Result) Percentile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.Latencies))+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// body is one encoded request.
type body struct {
	b      []byte
	points int
}

// sender sends bodies on one connection.
type sender interface {
	// send sends one body and waits for its acknowledgment. An error is a
	// failed request; a *connError also means the connection is broken.
	send(ctx context.Context, b body) error
	// close finishes the connection and returns the error replies it saw.
	close() (errorLines []string)
}

// Run streams src to the server and measures it: one encoder goroutine
// feeds every connection, round robin.
func Run(ctx context.Context, o Options, src Source) (*Result, error) {
	return run(ctx, o, []Source{src})
}

// RunSharded streams srcs[i] on connection i (o.Conns is len(srcs)), each
// encoded by its own goroutine: the shape of collectors that each own some
// hosts, and of Prometheus' remote-write shards, where a series always
// travels on one connection, in order.
func RunSharded(ctx context.Context, o Options, srcs []Source) (*Result, error) {
	o.Conns = len(srcs)
	return run(ctx, o, srcs)
}

func run(ctx context.Context, o Options, srcs []Source) (*Result, error) {
	o.EnsureDefaults()
	senders, err := dialAll(ctx, &o)
	if err != nil {
		return nil, err
	}
	ps := make([]*producer, len(senders))
	for i := range ps {
		if i >= len(srcs) { // one source shared by every sender
			ps[i] = ps[0]
			continue
		}
		if ps[i], err = produce(ctx, &o, srcs[i]); err != nil {
			stopAll(ps[:i])
			closeAll(senders)
			return nil, err
		}
	}
	before, err := readServer(o.PID)
	if err != nil {
		stopAll(ps)
		closeAll(senders)
		return nil, err
	}
	res := &Result{}
	self0, serr := procstat.Read(os.Getpid())
	start := time.Now()
	runSenders(ctx, senders, ps, res)
	for _, line := range closeAll(senders) {
		res.addError(line)
	}
	res.Elapsed = time.Since(start)
	if self1, err := procstat.Read(os.Getpid()); err == nil && serr == nil {
		res.LoaderCPUSeconds = self1.CPUSeconds - self0.CPUSeconds
	}
	if perr := stopAll(ps); perr != nil {
		return res, perr
	}
	slices.Sort(res.Latencies)
	return res, res.serverCost(o.PID, before)
}

// stopAll stops each distinct producer and returns the first error.
func stopAll(ps []*producer) error {
	var first error
	for i, p := range ps {
		if i > 0 && p == ps[0] {
			continue
		}
		if err := p.wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func dialAll(ctx context.Context, o *Options) ([]sender, error) {
	ss := make([]sender, 0, o.Conns)
	for i := 0; i < o.Conns; i++ {
		s, err := dial(ctx, o)
		if err != nil {
			closeAll(ss)
			return nil, err
		}
		ss = append(ss, s)
	}
	return ss, nil
}

func dial(ctx context.Context, o *Options) (sender, error) {
	if o.Format == gen.FormatTelnet {
		return dialTelnet(ctx, o)
	}
	return newHTTPSender(o), nil
}

func closeAll(ss []sender) []string {
	var lines []string
	for _, s := range ss {
		lines = append(lines, s.close()...)
	}
	return lines
}

// producer feeds bodies to the senders; its goroutine is owned by Run.
// Senders hand sent bodies' buffers back through free, so that encoding
// ahead of them allocates nothing in steady state: the load generator's own
// garbage would otherwise take CPU from the server on a shared machine.
type producer struct {
	ch   chan body
	free chan []byte
	wg   sync.WaitGroup
	err  error
	stop chan struct{}
}

// recycle returns a sent body's buffer for reuse, or drops it when enough
// are waiting.
func (p *producer) recycle(b []byte) {
	if p.free == nil {
		return
	}
	select {
	case p.free <- b[:0]:
	default:
	}
}

func produce(ctx context.Context, o *Options, src Source) (*producer, error) {
	p := &producer{stop: make(chan struct{})}
	if o.Preload {
		var all []body
		for {
			b, n, err := src.Next(nil)
			if err != nil {
				return nil, fmt.Errorf("encode: %w", err)
			}
			if n == 0 {
				break
			}
			all = append(all, body{b, n})
		}
		p.ch = make(chan body, len(all))
		for _, b := range all {
			p.ch <- b
		}
		close(p.ch)
		return p, nil
	}
	p.ch = make(chan body, 2*o.Conns)
	p.free = make(chan []byte, 3*o.Conns+1)
	p.wg.Add(1)
	go p.loop(ctx, src)
	return p, nil
}

func (p *producer) loop(ctx context.Context, src Source) {
	defer p.wg.Done()
	defer close(p.ch)
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		default:
		}
		b, n, err := src.Next(buf)
		if err != nil {
			p.err = fmt.Errorf("encode: %w", err)
			return
		}
		if n == 0 {
			return
		}
		select {
		case p.ch <- body{b, n}:
		case <-ctx.Done():
			return
		case <-p.stop:
			return
		}
	}
}

// wait stops the producer (if senders quit early) and returns its error.
func (p *producer) wait() error {
	close(p.stop)
	for range p.ch { // unblock a pending send
	}
	p.wg.Wait()
	return p.err
}

func runSenders(ctx context.Context, ss []sender, ps []*producer, res *Result) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range ss {
		p := ps[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			var points, reqs int64
			var errs []string
			for b := range p.ch {
				t0 := time.Now()
				err := s.send(ctx, b)
				if err == nil {
					// Only a sent body is surely no longer read (an HTTP
					// transport may still be writing one answered early).
					p.recycle(b.b)
					lat = append(lat, time.Since(t0))
					points += int64(b.points)
					reqs++
					continue
				}
				errs = append(errs, err.Error())
				var ce *connError
				if errors.As(err, &ce) || ctx.Err() != nil {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, lat...)
			res.Points += points
			res.Requests += reqs
			for _, e := range errs {
				res.addError(e)
			}
		}()
	}
	wg.Wait()
}

const maxErrorSamples = 5

func (r *Result) addError(msg string) {
	r.Errors++
	if len(r.ErrorSamples) < maxErrorSamples {
		r.ErrorSamples = append(r.ErrorSamples, msg)
	}
}

func readServer(pid int) (procstat.Sample, error) {
	if pid == 0 {
		return procstat.Sample{}, nil
	}
	return procstat.Read(pid)
}

func (r *Result) serverCost(pid int, before procstat.Sample) error {
	if pid == 0 {
		return nil
	}
	after, err := procstat.Read(pid)
	if err != nil {
		return errors.Join(errors.New("read server stats after the run"), err)
	}
	r.Server = &ServerCost{CPUSeconds: after.CPUSeconds - before.CPUSeconds, PeakRSS: after.PeakRSS}
	return nil
}

// connError is a failure that leaves the connection unusable.
type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }
func (e *connError) Unwrap() error { return e.err }
