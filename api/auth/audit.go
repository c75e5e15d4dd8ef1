package auth

import "sync/atomic"

// Outcome is what became of a request or command, for the audit log.
type Outcome uint8

const (
	// Allowed is an admin action that was let through.
	Allowed Outcome = iota
	// Missing is a client that gave no credentials (HTTP 401).
	Missing
	// Invalid is a client whose credentials are wrong (HTTP 401).
	Invalid
	// Forbidden is a user whose role does not cover the action (HTTP 403).
	Forbidden
	numOutcomes
)

var outcomeNames = [numOutcomes]string{Allowed: "allowed", Missing: "missing_credentials",
	Invalid: "bad_credentials", Forbidden: "forbidden"}

// auditKinds are the ratelog kinds of the audit lines, one per outcome,
// so that a client's flood of one kind does not hide its other kinds.
var auditKinds = [numOutcomes]string{Allowed: "auth.admin", Missing: "auth.missing_credentials",
	Invalid: "auth.bad_credentials", Forbidden: "auth.forbidden"}

// String names the outcome as the audit log and /metrics do.
func (o Outcome) String() string { return outcomeNames[o] }

// Event is one audited request or telnet command.
type Event struct {
	User    string // "" when unknown
	Client  string // the client's address (ratelog.Client)
	Route   string // the route or telnet command, as the route table names it
	Method  string // the HTTP method, or "telnet"
	Need    Role   // the role the action needs
	Outcome Outcome
}

// Stats are the Authenticator's counters.
type Stats struct {
	// Failures counts refusals by outcome (Missing, Invalid, Forbidden).
	Failures [numOutcomes]atomic.Int64
	// AdminActions counts admin actions let through.
	AdminActions atomic.Int64
	// Reloads and ReloadErrors count reloads of the file that took and
	// that kept the users in force.
	Reloads, ReloadErrors atomic.Int64
	// BcryptChecks counts bcrypt comparisons run; CacheHits those the
	// cache spared.
	BcryptChecks, CacheHits atomic.Int64
}

// Stats returns the live counters.
func (a *Authenticator) Stats() *Stats { return &a.stats }

// Audit logs and counts ev: every refusal and every admin action let
// through, one line per client and kind a window (internal/ratelog), the
// lines dropped counted on the next.
func (a *Authenticator) Audit(ev Event) {
	// ratelog names the client itself.
	args := []any{"user", ev.User, "route", ev.Route, "method", ev.Method,
		"need", ev.Need.String(), "outcome", ev.Outcome.String()}
	if ev.Outcome == Allowed {
		a.stats.AdminActions.Add(1)
		a.opts.RateLog.Info(auditKinds[ev.Outcome], ev.Client, "audit: admin action", args...)
		return
	}
	a.stats.Failures[ev.Outcome].Add(1)
	a.opts.RateLog.Warn(auditKinds[ev.Outcome], ev.Client, "audit: access denied", args...)
}
