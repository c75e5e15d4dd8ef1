package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/internal/ratelog"
)

// authConfig holds the access-control keys.
type authConfig struct {
	file       string // tsd.auth.config; "" off
	openPaths  string // tsd.auth.open_paths, comma list
	telnetRole string // tsd.auth.telnet_role
	// authn is the users file in force, opened by serve; nil when off.
	authn *auth.Authenticator
}

// openAuth loads tsd.auth.config (a bad file stops the start, naming the
// entry and field) and reloads it on SIGHUP until ctx ends; the caller
// closes what it returns. Without the key it returns nil.
func (c *config) openAuth(ctx context.Context, log *slog.Logger, rl *ratelog.Logger) (*auth.Authenticator, error) {
	if c.auth.file == "" {
		return nil, nil
	}
	a, err := auth.New(auth.Options{Path: c.auth.file, Logger: log, RateLog: rl})
	if err != nil {
		return nil, fmt.Errorf("tsd.auth.config: %w", err)
	}
	log.Info("access control on", "file", c.auth.file, "users", a.Users(),
		"open_paths", c.auth.openPaths, "telnet_role", c.auth.telnetRole)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				a.Reload() // logs its own outcome
			}
		}
	}()
	c.auth.authn = a
	return a, nil
}

// wireAuth sets the access-control fields of the API options.
func (c *config) wireAuth(opts *api.Options) {
	if c.auth.authn == nil {
		return
	}
	opts.Auth = c.auth.authn
	opts.OpenPaths = splitList(c.auth.openPaths)
}

// splitList splits a comma list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// telnetAuth is the telnet handler's access control, nil when off.
func (c *config) telnetAuth() service.TelnetAuth {
	if c.auth.authn == nil {
		return nil
	}
	role, _ := auth.ParseRole(c.auth.telnetRole) // the key checked it
	return telnetAuth{a: c.auth.authn, anonymous: role}
}

// telnetAuth adapts the users file to the telnet handler. auth's roles
// and service's access levels share their values.
type telnetAuth struct {
	a         *auth.Authenticator
	anonymous auth.Role // tsd.auth.telnet_role
}

// Open implements service.TelnetAuth: a verified client certificate
// naming a user, else tsd.auth.telnet_role.
func (t telnetAuth) Open(conn net.Conn) (string, service.Access) {
	if id, ok := t.a.Cert(api.ConnTLSState(conn)); ok {
		return id.User, service.Access(id.Role)
	}
	return "", service.Access(t.anonymous)
}

// Login implements service.TelnetAuth.
func (t telnetAuth) Login(method string, args []string) (string, service.Access, bool) {
	var (
		id  auth.Identity
		err error
	)
	switch {
	case method == "basic" && len(args) == 2:
		id, err = t.a.Basic(args[0], args[1])
	case method == "token" && len(args) == 1:
		id, err = t.a.Token(args[0])
	default:
		return "", service.AccessNone, false
	}
	if err != nil {
		return "", service.AccessNone, false
	}
	return id.User, service.Access(id.Role), true
}

// Audit implements service.TelnetAuth.
func (t telnetAuth) Audit(conn net.Conn, user, command string, need service.Access, o service.AuthOutcome) {
	t.a.Audit(auth.Event{User: user, Client: ratelog.Client(conn.RemoteAddr()), Route: "telnet " + command,
		Method: "telnet", Need: auth.Role(need), Outcome: auth.Outcome(o)})
}

// authStats adds the access-control counters; a is nil when it is off.
func (l *statList) authStats(a *auth.Authenticator) {
	if a == nil {
		return
	}
	s := a.Stats()
	for _, o := range []auth.Outcome{auth.Missing, auth.Invalid, auth.Forbidden} {
		l.add("tsd.auth.failures", "Requests and telnet commands refused by access control, by kind.", true,
			s.Failures[o].Load(), api.StatTag{Key: "kind", Value: o.String()})
	}
	l.add("tsd.auth.admin_actions", "Admin actions let through (each in the audit log).", true, s.AdminActions.Load())
	l.add("tsd.auth.reloads", "Reloads of the users file, by result.", true, s.Reloads.Load(),
		api.StatTag{Key: "result", Value: "ok"})
	l.add("tsd.auth.reloads", "Reloads of the users file, by result.", true, s.ReloadErrors.Load(),
		api.StatTag{Key: "result", Value: "error"})
	l.add("tsd.auth.bcrypt_checks", "bcrypt comparisons run; the cache spares repeated ones.", true, s.BcryptChecks.Load())
	l.add("tsd.auth.cache_hits", "Password checks answered by the bcrypt cache.", true, s.CacheHits.Load())
}
