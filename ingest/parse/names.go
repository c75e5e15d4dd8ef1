package parse

import "github.com/tsd-db/tsd/uid"

// Names checks names with a uid.Validator, answering the common all-ASCII
// name from a table. Immutable and safe for concurrent use.
type Names struct {
	v  *uid.Validator
	ok [256]bool // ASCII bytes v accepts; bytes >= 0x80 go to v
}

// NewNames returns a checker for v's rules.
func NewNames(v *uid.Validator) *Names {
	n := &Names{v: v}
	for c := 0; c < 0x80; c++ {
		// Rules judge ASCII characters one by one, so a one-byte name
		// decides the byte.
		n.ok[c] = v.Validate(uid.Metric, []byte{byte(c)}) == nil
	}
	return n
}

// Check returns nil if name is valid for kind, else the Validator's
// *uid.NameError (OpenTSDB's wording). It allocates only for an error.
func (n *Names) Check(kind uid.Kind, name []byte) error {
	for _, c := range name {
		if !n.ok[c] {
			return n.v.Validate(kind, name)
		}
	}
	if len(name) == 0 {
		return n.v.Validate(kind, name)
	}
	return nil
}

// Plain reports whether the byte c is valid anywhere in a name on its own:
// an ASCII byte the rules accept. A name made only of plain bytes is valid
// (when not empty); parsers that scan names anyway use Plain to skip Check.
func (n *Names) Plain(c byte) bool { return n.ok[c] }

// Validator returns the underlying validator.
func (n *Names) Validator() *uid.Validator { return n.v }
