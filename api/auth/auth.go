package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tsd-db/tsd/internal/ratelog"
)

// Default values of Options.
const (
	DefaultPollInterval = 2 * time.Second
	DefaultCacheSize    = 4096
)

// Options configure an Authenticator.
type Options struct {
	// Path is the users file (tsd.auth.config). Required.
	Path string
	// PollInterval is how often the file is read to notice a change.
	// Default 2 s; negative: never (Reload only).
	PollInterval time.Duration
	// CacheSize bounds the cached bcrypt outcomes. Default 4096.
	CacheSize int
	// Logger receives reload lines. Default slog.Default().
	Logger *slog.Logger
	// RateLog receives the audit lines (Audit), which clients can make
	// repeat. Default a ratelog.Logger writing to Logger.
	RateLog *ratelog.Logger
}

// EnsureDefaults sets every zero field to its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RateLog == nil {
		o.RateLog = ratelog.New(ratelog.Options{Logger: o.Logger})
	}
	return o
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o.Path == "" {
		return errors.New("auth: Path is empty")
	}
	return nil
}

// Identity is who a client proved to be.
type Identity struct {
	User string
	Role Role
}

// Errors of the checks; callers answer them 401.
var (
	// ErrBadCredentials is a wrong password, an unknown user or token.
	ErrBadCredentials = errors.New("auth: bad credentials")
)

// Authenticator checks credentials against the users file in force.
type Authenticator struct {
	opts Options
	log  *slog.Logger
	cur  atomic.Pointer[users]

	// reloadMu orders reloads; seen is the hash of the file's bytes last
	// read, good or bad, so an unchanged file is neither reloaded nor
	// logged again.
	reloadMu sync.Mutex
	seen     [32]byte

	cacheMu sync.Mutex
	cache   map[[32]byte]bool
	// bcryptSlots bounds the bcrypt comparisons running at once, so a
	// client guessing passwords (each new guess costs one) cannot take
	// every core from the daemon's other work.
	bcryptSlots chan struct{}

	stats Stats
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// New loads opts.Path and starts watching it; an error names the file,
// entry and field. Close stops the watch.
func New(opts Options) (*Authenticator, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{opts: opts, log: opts.Logger, cache: make(map[[32]byte]bool),
		bcryptSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		stop:        make(chan struct{}), done: make(chan struct{})}
	data, err := os.ReadFile(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	u, err := parseUsers(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Path, err)
	}
	a.cur.Store(u)
	a.seen = sha256.Sum256(data)
	go a.watch()
	return a, nil
}

// Close stops watching the file. It is idempotent.
func (a *Authenticator) Close() error {
	a.once.Do(func() { close(a.stop) })
	<-a.done
	return nil
}

// watch reloads the file when its bytes change, until Close.
func (a *Authenticator) watch() {
	defer close(a.done)
	if a.opts.PollInterval < 0 {
		<-a.stop
		return
	}
	t := time.NewTicker(a.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
			a.reload(false)
		}
	}
}

// Reload reads the file again now (the daemon calls it on SIGHUP). A file
// that does not load keeps the users in force; the error is logged at
// ERROR and returned.
func (a *Authenticator) Reload() error { return a.reload(true) }

// reload loads the file; unless force, only when its bytes changed.
func (a *Authenticator) reload(force bool) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	data, err := os.ReadFile(a.opts.Path)
	if err != nil {
		if force || a.seen != [32]byte{} {
			a.seen = [32]byte{}
			a.stats.ReloadErrors.Add(1)
			a.log.Error("auth: users file unreadable; keeping the users in force", "file", a.opts.Path, "err", err)
		}
		return err
	}
	sum := sha256.Sum256(data)
	if sum == a.seen && !force {
		return nil
	}
	a.seen = sum
	u, err := parseUsers(data)
	if err != nil {
		a.stats.ReloadErrors.Add(1)
		a.log.Error("auth: users file does not load; keeping the users in force", "file", a.opts.Path, "err", err)
		return err
	}
	a.cur.Store(u)
	a.stats.Reloads.Add(1)
	a.log.Info("auth: users file loaded", "file", a.opts.Path, "users", len(u.byName))
	return nil
}

// dummyHash is checked for unknown users so that they cost what a known
// user does (cost 10, bcrypt's default).
var dummyHash = []byte("$2a$10$YZDCOPgeddKsYujQn.TjsuWGkw2.4Dv534fXqfQsxXPYOAlWFmmZ2")

// Basic checks a name and password.
func (a *Authenticator) Basic(name, password string) (Identity, error) {
	u := a.cur.Load()
	usr := u.byName[name]
	hash := dummyHash
	if usr != nil && usr.bcrypt != nil {
		hash = usr.bcrypt
	}
	ok := a.checkBcrypt(name, password, hash)
	if usr == nil || usr.bcrypt == nil || !ok {
		return Identity{}, ErrBadCredentials
	}
	return Identity{User: usr.name, Role: usr.role}, nil
}

// checkBcrypt compares password with hash, through the cache.
func (a *Authenticator) checkBcrypt(name, password string, hash []byte) bool {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(password))
	h.Write([]byte{0})
	h.Write(hash)
	var key [32]byte
	h.Sum(key[:0])
	a.cacheMu.Lock()
	ok, hit := a.cache[key]
	a.cacheMu.Unlock()
	if hit {
		a.stats.CacheHits.Add(1)
		return ok
	}
	a.stats.BcryptChecks.Add(1)
	a.bcryptSlots <- struct{}{}
	ok = bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	<-a.bcryptSlots
	a.cacheMu.Lock()
	if len(a.cache) >= a.opts.CacheSize {
		for k := range a.cache { // map order: an arbitrary entry
			delete(a.cache, k)
			break
		}
	}
	a.cache[key] = ok
	a.cacheMu.Unlock()
	return ok
}

// Token checks a bearer token against every user's token hash, each
// compared in constant time.
func (a *Authenticator) Token(token string) (Identity, error) {
	sum := sha256.Sum256([]byte(token))
	var found *user
	for _, usr := range a.cur.Load().tokens {
		if subtle.ConstantTimeCompare(sum[:], usr.token[:]) == 1 && found == nil {
			found = usr
		}
	}
	if found == nil {
		return Identity{}, ErrBadCredentials
	}
	return Identity{User: found.name, Role: found.role}, nil
}

// Cert returns the user a verified client certificate names by its
// subject's common name; ok is false without a verified chain or when
// no user has that name.
func (a *Authenticator) Cert(cs *tls.ConnectionState) (Identity, bool) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return Identity{}, false
	}
	cn := cs.VerifiedChains[0][0].Subject.CommonName
	usr := a.cur.Load().byName[cn]
	if usr == nil {
		return Identity{}, false
	}
	return Identity{User: usr.name, Role: usr.role}, true
}

// Users reports how many users the file in force has.
func (a *Authenticator) Users() int { return len(a.cur.Load().byName) }
