package ratelog

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Default values of Options.
const (
	DefaultEvery     = time.Minute
	DefaultBurst     = 1
	DefaultKindBurst = 10
	DefaultMaxKeys   = 10_000
)

// Options configure a Logger. The zero value of each field means its
// default.
type Options struct {
	// Logger receives the lines that pass. Default slog.Default().
	Logger *slog.Logger
	// Every is the length of a window. Default one minute.
	Every time.Duration
	// Burst is how many lines one (kind, client) pair may write in a
	// window. Default 1.
	Burst int
	// KindBurst is how many lines one kind may write in a window, across
	// all its clients. Default 10.
	KindBurst int
	// MaxKeys bounds the (kind, client) pairs remembered at once.
	// Default 10,000.
	MaxKeys int
	// Now returns the current time. Default time.Now; tests set it.
	Now func() time.Time
}

// EnsureDefaults sets every zero field to its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.KindBurst <= 0 {
		o.KindBurst = DefaultKindBurst
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Logger writes log lines within per-client and per-kind budgets.
type Logger struct {
	opts Options
	mu   struct {
		sync.Mutex
		pairs map[pairKey]*budget
		kinds map[string]*budget
	}
}

type pairKey struct{ kind, client string }

// budget is one window's count for a pair or a kind.
type budget struct {
	start      time.Time // window start
	used       int       // lines written in the window
	suppressed int64     // kinds only: lines dropped since the kind's last line
}

// New returns a Logger for opts.
func New(opts Options) *Logger {
	l := &Logger{opts: *opts.EnsureDefaults()}
	l.mu.pairs = make(map[pairKey]*budget)
	l.mu.kinds = make(map[string]*budget)
	return l
}

// Slog returns the logger lines are written to.
func (l *Logger) Slog() *slog.Logger { return l.opts.Logger }

// Info logs at INFO within the budget of (kind, client).
func (l *Logger) Info(kind, client, msg string, args ...any) bool {
	return l.Log(slog.LevelInfo, kind, client, msg, args...)
}

// Warn logs at WARN within the budget of (kind, client).
func (l *Logger) Warn(kind, client, msg string, args ...any) bool {
	return l.Log(slog.LevelWarn, kind, client, msg, args...)
}

// Error logs at ERROR within the budget of (kind, client).
func (l *Logger) Error(kind, client, msg string, args ...any) bool {
	return l.Log(slog.LevelError, kind, client, msg, args...)
}

// Log writes msg with args at level, adding the attributes "kind",
// "client" (when not empty) and "suppressed" (lines of the kind dropped
// since its last written line, when any), unless the pair or the kind has
// used its window's budget; then it counts the line and reports false.
func (l *Logger) Log(level slog.Level, kind, client, msg string, args ...any) bool {
	if !l.opts.Logger.Enabled(context.Background(), level) {
		return false
	}
	suppressed, ok := l.take(kind, client)
	if !ok {
		return false
	}
	attrs := make([]any, 0, len(args)+6)
	attrs = append(attrs, "kind", kind)
	if client != "" {
		attrs = append(attrs, "client", client)
	}
	attrs = append(attrs, args...)
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	l.opts.Logger.Log(context.Background(), level, msg, attrs...)
	return true
}

// take spends one line of the pair's and the kind's budgets. It returns
// the kind's drops to report with the line, or false when the line is
// dropped (and counted on its kind).
func (l *Logger) take(kind, client string) (int64, bool) {
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.kindBudget(kind, now)
	p := l.pairBudget(pairKey{kind, client}, now)
	if k.used >= l.opts.KindBurst || p != nil && p.used >= l.opts.Burst {
		k.suppressed++
		return 0, false
	}
	k.used++
	if p != nil {
		p.used++
	}
	n := k.suppressed
	k.suppressed = 0
	return n, true
}

func (l *Logger) kindBudget(kind string, now time.Time) *budget {
	b := l.mu.kinds[kind]
	if b == nil {
		b = &budget{start: now}
		l.mu.kinds[kind] = b
	}
	l.roll(b, now)
	return b
}

// pairBudget returns the pair's budget, or nil when the table is full of
// pairs whose windows are still open.
func (l *Logger) pairBudget(key pairKey, now time.Time) *budget {
	b := l.mu.pairs[key]
	if b == nil {
		if len(l.mu.pairs) >= l.opts.MaxKeys && !l.evict(now) {
			return nil
		}
		b = &budget{start: now}
		l.mu.pairs[key] = b
	}
	l.roll(b, now)
	return b
}

// roll starts a new window on b once its window has ended.
func (l *Logger) roll(b *budget, now time.Time) {
	if now.Sub(b.start) >= l.opts.Every {
		b.start, b.used = now, 0
	}
}

// evict forgets the pairs whose window has ended; it reports whether any
// room was made.
func (l *Logger) evict(now time.Time) bool {
	freed := false
	for key, b := range l.mu.pairs {
		if now.Sub(b.start) >= l.opts.Every {
			delete(l.mu.pairs, key)
			freed = true
		}
	}
	return freed
}

// Client returns the part of a remote address that names a client, its IP
// address without the port (each connection has a new port), or the
// address as text when it has no port.
func Client(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	s := addr.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}
