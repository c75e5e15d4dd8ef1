package auth

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// fileEntry is one user as the file spells it.
type fileEntry struct {
	Name           string `yaml:"name"`
	PasswordBcrypt string `yaml:"password_bcrypt"`
	TokenSHA256    string `yaml:"token_sha256"`
	Role           string `yaml:"role"`
}

type fileDoc struct {
	Users []fileEntry `yaml:"users"`
}

// user is one validated entry.
type user struct {
	name     string
	role     Role
	bcrypt   []byte   // nil: no password
	token    [32]byte // SHA-256 of the token
	hasToken bool
}

// users is one loaded file; it is immutable once built.
type users struct {
	byName map[string]*user
	tokens []*user // users with a token, in file order
}

// ErrInvalidFile marks a users file that does not load; the error's text
// names the entry and field.
var ErrInvalidFile = errors.New("auth: invalid users file")

// parseUsers reads and validates a users file.
func parseUsers(data []byte) (*users, error) {
	var doc fileDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrInvalidFile, err)
	}
	if len(doc.Users) == 0 {
		return nil, fmt.Errorf("%w: no users: the file needs a users: list with at least one entry", ErrInvalidFile)
	}
	u := &users{byName: make(map[string]*user, len(doc.Users))}
	for i, e := range doc.Users {
		usr, err := e.validate()
		if err != nil {
			return nil, fmt.Errorf("%w: users entry %d (name %q): %v", ErrInvalidFile, i+1, e.Name, err)
		}
		if _, dup := u.byName[usr.name]; dup {
			return nil, fmt.Errorf("%w: users entry %d (name %q): name: listed twice", ErrInvalidFile, i+1, e.Name)
		}
		u.byName[usr.name] = usr
		if usr.hasToken {
			u.tokens = append(u.tokens, usr)
		}
	}
	return u, nil
}

// validate checks one entry, naming the field at fault.
func (e fileEntry) validate() (*user, error) {
	if e.Name == "" {
		return nil, errors.New("name: missing")
	}
	if strings.ContainsAny(e.Name, ": \t\r\n") {
		return nil, errors.New("name: must not hold a colon or white space")
	}
	if e.Role == "" {
		return nil, errors.New("role: missing: want read, write or admin")
	}
	role, err := ParseRole(e.Role)
	if err != nil || role == None {
		return nil, fmt.Errorf("role: %q: want read, write or admin", e.Role)
	}
	usr := &user{name: e.Name, role: role}
	if e.PasswordBcrypt == "" && e.TokenSHA256 == "" {
		return nil, errors.New("password_bcrypt or token_sha256: missing: a user needs one of them")
	}
	if e.PasswordBcrypt != "" {
		if _, err := bcrypt.Cost([]byte(e.PasswordBcrypt)); err != nil {
			return nil, fmt.Errorf("password_bcrypt: not a bcrypt hash ($2a$, $2b$ or $2y$): %v", err)
		}
		usr.bcrypt = []byte(e.PasswordBcrypt)
	}
	if e.TokenSHA256 != "" {
		if err := parseTokenHash(e.TokenSHA256, &usr.token); err != nil {
			return nil, fmt.Errorf("token_sha256: %v", err)
		}
		usr.hasToken = true
	}
	return usr, nil
}

// parseTokenHash reads 64 lowercase hex digits.
func parseTokenHash(s string, dst *[32]byte) error {
	if len(s) != 64 || strings.ToLower(s) != s {
		return fmt.Errorf("want 64 lowercase hex digits (the SHA-256 of the token), got %d characters", len(s))
	}
	if _, err := hex.Decode(dst[:], []byte(s)); err != nil {
		return fmt.Errorf("want 64 lowercase hex digits: %v", err)
	}
	return nil
}
