// Package auth is tsd's access control: the users file
// (tsd.auth.config), the roles it grants, and the checks of credentials
// that package api (HTTP) and the telnet handler ask for.
//
// # The users file
//
// A YAML document with one list:
//
//	users:
//	  - name: grafana
//	    password_bcrypt: $2y$10$...   # htpasswd -nbBC 10 grafana secret
//	    role: read
//	  - name: telegraf
//	    token_sha256: 9f86d08...      # printf %s "$TOKEN" | sha256sum
//	    role: write
//	  - name: ops
//	    password_bcrypt: $2b$12$...
//	    token_sha256: 2c26b46...      # a user may have both
//	    role: admin
//
// Each user has a unique non-empty name (no colon, no white space, since
// Basic credentials and telnet's auth line split on them), a role, and a
// password_bcrypt, a token_sha256 (64 lowercase hex digits, the SHA-256 of
// the token) or both. Keys the file does not know are an error, so a typo
// never silently drops a credential. Load errors name the entry (its
// position, from 1, and its name) and the field.
//
// # Roles
//
// Roles are ordered: read < write < admin, each granting what the one
// before it does. None is the role of no one: an unauthenticated client.
// Which role a request needs is decided by the caller (package api's
// route table, the telnet handler's commands).
//
// # Checks
//
// Basic checks a name and password against the user's bcrypt hash. bcrypt
// is slow on purpose (tens of milliseconds at cost 10), so outcomes are
// cached: the key is the SHA-256 of the name, the password and the stored
// hash, so a changed hash never matches an old entry and the cache holds
// no password. The cache keeps at most Options.CacheSize outcomes,
// dropping an arbitrary one when full; a writer's requests after its
// first cost a SHA-256 and a map lookup. At most half the cores (one at
// least) run bcrypt at once; further checks wait, so a client guessing
// passwords, each guess a new bcrypt, slows logins but not the rest of
// the daemon. Token hashes the token and compares it with every user's
// token hash in constant time. An unknown user costs a bcrypt against a
// fixed hash, like a known one, so the answer's timing does not tell
// which names exist.
//
// A client certificate names a user by its subject's common name (Cert);
// only a chain the TLS handshake verified counts.
//
// # Reloading
//
// The file is read at New (an error there is the caller's to report: the
// daemon does not start), then again by Reload (the daemon calls it on
// SIGHUP) and by a goroutine that reads the file every
// Options.PollInterval and reloads it when its bytes change. A file that
// fails to load keeps the users in force and is logged at ERROR, once per
// distinct content. Close stops the goroutine.
//
// An Authenticator is safe for concurrent use.
package auth
