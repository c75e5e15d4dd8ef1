package auth

import "fmt"

// Role is what a user may do. Roles are ordered: each grants everything
// the ones below it do.
type Role uint8

const (
	// None is no role: a client that has not authenticated.
	None Role = iota
	// Read may query: queries, suggest, lookups, version, stats, metrics.
	Read
	// Write may also ingest points on every path.
	Write
	// Admin may do everything, UID assignment and deletes included.
	Admin
)

var roleNames = [...]string{None: "none", Read: "read", Write: "write", Admin: "admin"}

// String returns the role's name as the users file spells it.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", r)
}

// Allows reports whether r grants need.
func (r Role) Allows(need Role) bool { return r >= need }

// ParseRole reads a role name: none, read, write or admin.
func ParseRole(s string) (Role, error) {
	for r, name := range roleNames {
		if s == name {
			return Role(r), nil
		}
	}
	return None, fmt.Errorf("unknown role %q: want read, write or admin", s)
}
