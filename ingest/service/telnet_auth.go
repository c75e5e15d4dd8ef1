package service

import (
	"bytes"
	"net"

	"github.com/tsd-db/tsd/ingest/telnet"
)

// Access is what a telnet connection may do; each level grants the ones
// below it. The values match package api/auth's roles.
type Access uint8

const (
	AccessNone  Access = iota // only version, help and exit
	AccessRead                // stats
	AccessWrite               // put, rollup, histogram
	AccessAdmin               // dropcaches, diediedie
)

// AuthOutcome is what became of a telnet command under access control,
// for the audit log. The values match package api/auth's outcomes.
type AuthOutcome uint8

const (
	AuthAllowed   AuthOutcome = iota // an admin command let through
	AuthMissing                      // a command before the connection authenticated
	AuthInvalid                      // an auth line that failed
	AuthForbidden                    // a command the user's access does not cover
)

// TelnetAuth is access control for telnet connections (TelnetOptions.Auth).
type TelnetAuth interface {
	// Open returns who a new connection is before any auth line: the
	// user its verified client certificate names, or the access granted
	// to every telnet connection (user ""); AccessNone for neither.
	Open(conn net.Conn) (user string, a Access)
	// Login checks an auth line: method "basic" with a user and password,
	// or "token" with a token.
	Login(method string, args []string) (user string, a Access, ok bool)
	// Audit records a refused command, a failed auth line, or an admin
	// command let through.
	Audit(conn net.Conn, user, command string, need Access, o AuthOutcome)
}

// Replies to an auth line, those of OpenTSDB 2.4's telnet authentication
// (reply adds the "\n").
const (
	authSuccess = "AUTH_SUCCESS\r"
	authFail    = "AUTH_FAIL\r"
)

// maxAuthFailures closes a connection at its third failed auth line or
// command refused for want of one.
const maxAuthFailures = 3

// commandAccess is the access a command needs. An unknown command needs
// read, so that a connection that has not authenticated learns only that
// it must.
func commandAccess(cmd telnet.Command) Access {
	switch cmd {
	case telnet.Version, telnet.Help, telnet.Exit:
		return AccessNone
	case telnet.Put, telnet.Rollup, telnet.Histogram:
		return AccessWrite
	case telnet.DropCaches, telnet.DieDieDie:
		return AccessAdmin
	}
	return AccessRead
}

var accessNames = [...]string{"none", "read", "write", "admin"}

func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return "unknown"
}

// parseAuthLine splits "auth METHOD ARG..." into its method and arguments;
// ok is false unless the line is an auth command with a method.
func parseAuthLine(line []byte) (method string, args []string, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 2 || string(f[0]) != "auth" {
		return "", nil, false
	}
	args = make([]string, len(f)-2)
	for i, a := range f[2:] {
		args[i] = string(a)
	}
	return string(f[1]), args, true
}

// gate decides, under access control, whether the command runs; when it
// does not, gate has answered it, and keep says whether the connection
// stays open.
func (c *telnetConn) gate(cmd telnet.Command, name, line []byte) (run, keep bool) {
	a := c.h.opts.Auth
	if cmd == telnet.Unknown && string(name) == "auth" {
		return false, c.login(line)
	}
	need := commandAccess(cmd)
	switch {
	case need == AccessNone:
		return true, true
	case c.access == AccessNone:
		c.reply("auth: authentication required")
		a.Audit(c.conn, c.user, string(name), need, AuthMissing)
		return false, c.failed()
	case c.access < need:
		c.reply("auth: permission denied: " + string(name) + " needs role " + need.String() +
			"; user " + c.user + " has role " + c.access.String())
		a.Audit(c.conn, c.user, string(name), need, AuthForbidden)
		return false, true
	case need == AccessAdmin:
		a.Audit(c.conn, c.user, string(name), need, AuthAllowed)
	}
	return true, true
}

// login runs an auth line; false closes the connection.
func (c *telnetConn) login(line []byte) bool {
	method, args, _ := parseAuthLine(line)
	user, access, ok := c.h.opts.Auth.Login(method, args)
	if !ok || access == AccessNone {
		c.reply(authFail)
		c.h.opts.Auth.Audit(c.conn, firstArg(method, args), "auth", AccessNone, AuthInvalid)
		return c.failed()
	}
	c.user, c.access = user, access
	c.reply(authSuccess)
	return true
}

// firstArg is the user an auth basic line names, for the audit log.
func firstArg(method string, args []string) string {
	if method == "basic" && len(args) > 0 {
		return args[0]
	}
	return ""
}

// failed counts an authentication failure; false once there are
// maxAuthFailures, which closes the connection.
func (c *telnetConn) failed() bool {
	c.authFails++
	return c.authFails < maxAuthFailures
}
